// aten::unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out)
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status unsqueeze_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dim() >= kMaxRank) return ctx.fail("the result would have rank above 16");
  ET_ASSIGN_OR_RETURN(int at, wrap_dim(ctx, dim, self->dim() + 1));
  Shape shape;
  shape.rank = self->dim() + 1;
  for (int d = 0, s = 0; d < shape.rank; ++d) shape.sizes[d] = d == at ? 1 : self->size(s++);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  return copy_logical(ctx, *self, *out);
}

ET_REGISTER_KERNEL("aten::unsqueeze_copy.out", unsqueeze_copy_out);

}  // namespace
}  // namespace et::kernels
