// aten::unfold_copy.out(Tensor self, int dimension, int size, int step, *, Tensor(a!) out)
// Every window of `size` elements along `dimension`, `step` apart: that dim becomes
// the number of windows and a new last dim of `size` holds each window.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status unfold_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t size, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(int64_t step, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dim() + 1 > kMaxRank) return ctx.fail("result rank above 16");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  // A 0-d tensor unfolds as if it had one dim of size 1, which the result drops.
  const int64_t n = self->dim() == 0 ? 1 : self->size(dim);
  const int64_t dim_stride = self->dim() == 0 ? 1 : self->stride(dim);
  if (step <= 0) return ctx.fail(fmt::format("step is {} but must be > 0", step));
  if (size < 0 || size > n) {
    return ctx.fail(
        fmt::format("maximum size for tensor at dimension {} is {} but size is {}", dim, n, size));
  }
  Shape shape;
  std::array<int64_t, kMaxRank> src_strides{};
  const int64_t windows = (n - size) / step + 1;
  for (int d = 0; d < self->dim(); ++d) {
    // The step only matters between two windows; then step < n, so the product stays
    // within the tensor's extent.
    src_strides[shape.rank] = d == dim ? dim_stride * (windows > 1 ? step : 1) : self->stride(d);
    shape.sizes[shape.rank++] = d == dim ? windows : self->size(d);
  }
  src_strides[shape.rank] = dim_stride;
  shape.sizes[shape.rank++] = size;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  strided_copy(shape, self->data(), src_strides.data(), out->mutable_data(), out->strides().data(),
               self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::unfold_copy.out", unfold_copy_out);

}  // namespace
}  // namespace et::kernels
