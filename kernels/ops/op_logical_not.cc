// aten::logical_not.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/binary_op.h"

namespace et::kernels {
namespace {

Status logical_not_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  return map_elementwise<bool, bool, 1>(ctx, {self}, *out, [](bool x) { return !x; });
}

ET_REGISTER_KERNEL("aten::logical_not.out", logical_not_out);

}  // namespace
}  // namespace et::kernels
