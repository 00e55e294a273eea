// aten::_to_copy.out(Tensor self, *, bool non_blocking=False, MemoryFormat? memory_format=None,
//     Tensor(a!) out)
// Tensor.to(dtype) before the exporter turns it into _to_dim_order_copy: out takes
// self's values converted to out's dtype, laid out in out's dim order.
#include "kernels/util/convert.h"

namespace et::kernels {
namespace {

Status to_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  return copy_convert(ctx, *self, *out);
}

ET_REGISTER_KERNEL("aten::_to_copy.out", to_copy_out);

}  // namespace
}  // namespace et::kernels
