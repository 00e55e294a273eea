// dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False,
//     int[]? dim_order=None, Tensor(a!) out)
// The exporter's form of clone(memory_format=...): same values, out's dim order.
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status clone_dim_order_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
  return copy_logical(ctx, *self, *out);
}

ET_REGISTER_KERNEL("dim_order_ops::_clone_dim_order.out", clone_dim_order_out);

}  // namespace
}  // namespace et::kernels
