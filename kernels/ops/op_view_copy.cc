// aten::view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out)
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status view_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto sizes, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  ET_ASSIGN_OR_RETURN(Shape shape, resolve_view_shape(ctx, sizes, self->numel()));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  return copy_logical(ctx, *self, *out);
}

ET_REGISTER_KERNEL("aten::view_copy.out", view_copy_out);

}  // namespace
}  // namespace et::kernels
