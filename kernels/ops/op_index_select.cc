// aten::index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out)
#include "kernels/util/index_util.h"

namespace et::kernels {
namespace {

Status index_select_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(const Tensor* index, ctx.input(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (index->dim() > 1) return ctx.fail("index must be 0-d or 1-d");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  const int64_t size = self->dim() == 0 ? 1 : self->size(dim);
  ET_ASSIGN_OR_RETURN(const int64_t* idx, checked_indices(ctx, *index, size));
  Shape shape = shape_of(*self);
  if (shape.rank > 0) shape.sizes[dim] = index->numel();
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (self->dim() == 0) return copy_logical(ctx, *self, *out);
  Shape slice = shape;
  slice.sizes[dim] = 1;
  const int64_t elsize = static_cast<int64_t>(self->element_size());
  for (int64_t i = 0; i < index->numel(); ++i) {
    const auto* src =
        static_cast<const uint8_t*>(self->data()) + idx[i] * self->stride(dim) * elsize;
    auto* dst = static_cast<uint8_t*>(out->mutable_data()) + i * out->stride(dim) * elsize;
    strided_copy(slice, src, self->strides().data(), dst, out->strides().data(),
                 self->element_size());
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::index_select.out", index_select_out);

}  // namespace
}  // namespace et::kernels
