// aten::transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out)
// self with dims dim0 and dim1 swapped.
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status transpose_copy_int_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim0_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t dim1_arg, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  ET_ASSIGN_OR_RETURN(int dim0, wrap_dim(ctx, dim0_arg, self->dim()));
  ET_ASSIGN_OR_RETURN(int dim1, wrap_dim(ctx, dim1_arg, self->dim()));
  Shape shape = shape_of(*self);
  std::array<int64_t, kMaxRank> src_strides{};
  for (int d = 0; d < self->dim(); ++d) src_strides[d] = self->stride(d);
  if (self->dim() > 0) {
    std::swap(shape.sizes[dim0], shape.sizes[dim1]);
    std::swap(src_strides[dim0], src_strides[dim1]);
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  strided_copy(shape, self->data(), src_strides.data(), out->mutable_data(), out->strides().data(),
               self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::transpose_copy.int_out", transpose_copy_int_out);

}  // namespace
}  // namespace et::kernels
