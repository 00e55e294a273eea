// aten::logical_or.out(Tensor self, Tensor other, *, Tensor(a!) out)
// Any dtype in; each value counts as true when nonzero.
#include "kernels/util/binary_op.h"

namespace et::kernels {
namespace {

Status logical_or_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return map_elementwise<bool, bool, 2>(ctx, {self, other}, *out,
                                        [](bool x, bool y) { return x || y; });
}

ET_REGISTER_KERNEL("aten::logical_or.out", logical_or_out);

}  // namespace
}  // namespace et::kernels
