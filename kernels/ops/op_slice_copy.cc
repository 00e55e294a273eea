// aten::slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None,
//     SymInt? end=None, SymInt step=1, *, Tensor(a!) out)
// start and end clamp to the dim like Python slicing; step must be positive.
#include <fmt/format.h>

#include <algorithm>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status slice_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(auto start_arg, ctx.optional_int_arg(2));
  ET_ASSIGN_OR_RETURN(auto end_arg, ctx.optional_int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t step, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(5));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dim() == 0) return ctx.fail("cannot slice a 0-d tensor");
  if (step <= 0) return ctx.fail(fmt::format("slice step must be positive, got {}", step));
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  const int64_t n = self->size(dim);
  auto clamp_index = [n](int64_t i) {
    if (i < 0) i += n;
    return std::clamp<int64_t>(i, 0, n);
  };
  const int64_t start = clamp_index(start_arg.value_or(0));
  const int64_t end = std::max(start, clamp_index(end_arg.value_or(n)));
  Shape shape = shape_of(*self);
  shape.sizes[dim] = end == start ? 0 : (end - start - 1) / step + 1;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  std::array<int64_t, kMaxRank> src_strides{};
  // The step only matters between two taken elements; then step < n, so the product
  // stays within the tensor's extent (a huge step with one element taken would overflow).
  const int64_t taken_step = shape.sizes[dim] > 1 ? step : 1;
  for (int d = 0; d < self->dim(); ++d) {
    src_strides[d] = self->stride(d) * (d == dim ? taken_step : 1);
  }
  const auto* base = static_cast<const uint8_t*>(self->data()) +
                     start * self->stride(dim) * static_cast<int64_t>(self->element_size());
  if (out->numel() == 0) return Status();
  strided_copy(shape, base, src_strides.data(), out->mutable_data(), out->strides().data(),
               self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::slice_copy.Tensor_out", slice_copy_out);

}  // namespace
}  // namespace et::kernels
