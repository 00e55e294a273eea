// aten::slice_scatter.out(Tensor self, Tensor src, int dim=0, SymInt? start=None,
//     SymInt? end=None, SymInt step=1, *, Tensor(a!) out)
// out = self with the slice self[start:end:step] along dim replaced by src (converted
// to self's dtype). start and end clamp like Python slicing; step must be positive.
#include <fmt/format.h>

#include <algorithm>

#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"
#include "kernels/util/scatter_view.h"

namespace et::kernels {
namespace {

Status slice_scatter_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* src, ctx.input(1));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(auto start_arg, ctx.optional_int_arg(3));
  ET_ASSIGN_OR_RETURN(auto end_arg, ctx.optional_int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t step, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(6));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dim() == 0) return ctx.fail("cannot slice a 0-d tensor");
  if (step <= 0) return ctx.fail(fmt::format("slice step must be positive, got {}", step));
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  const int64_t n = self->size(dim);
  auto clamp_index = [n](int64_t i) {
    if (i < 0) i += n;  // i >= INT64_MIN + n cannot overflow: n >= 0
    return std::clamp<int64_t>(i, 0, n);
  };
  const int64_t start = clamp_index(start_arg.value_or(0));
  const int64_t end = std::max(start, clamp_index(end_arg.value_or(n)));
  Shape slice = shape_of(*self);
  slice.sizes[dim] = end == start ? 0 : (end - start - 1) / step + 1;
  if (src->dim() != slice.rank ||
      !std::equal(src->sizes().begin(), src->sizes().end(), slice.sizes.begin())) {
    return ctx.fail(fmt::format("src of shape {} does not match the slice of shape {}",
                                shape_string(src->sizes()), shape_string(slice.view())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
  ET_RETURN_IF_ERROR(copy_logical(ctx, *self, *out));
  if (src->numel() == 0) return Status();
  std::array<int64_t, kMaxRank> dst_strides{};
  // The step only matters between two slice elements; then step < n, so the product
  // stays within the tensor's extent.
  const int64_t taken_step = slice.sizes[dim] > 1 ? step : 1;
  for (int d = 0; d < self->dim(); ++d)
    dst_strides[d] = out->stride(d) * (d == dim ? taken_step : 1);
  auto* dst = static_cast<uint8_t*>(out->mutable_data()) +
              start * out->stride(dim) * static_cast<int64_t>(out->element_size());
  return copy_into_view(ctx, slice, *src, *out, dst, dst_strides.data());
}

ET_REGISTER_KERNEL("aten::slice_scatter.out", slice_scatter_out);

}  // namespace
}  // namespace et::kernels
