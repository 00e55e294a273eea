// aten::detach_copy.out(Tensor self, *, Tensor(a!) out): a copy of self, in out's dim order.
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status detach_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
  return copy_logical(ctx, *self, *out);
}

ET_REGISTER_KERNEL("aten::detach_copy.out", detach_copy_out);

}  // namespace
}  // namespace et::kernels
