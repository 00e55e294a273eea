// aten::select_scatter.out(Tensor self, Tensor src, int dim, SymInt index, *,
//     Tensor(a!) out)
// out = self with out.select(dim, index) replaced by src (converted to self's dtype).
#include <fmt/format.h>

#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"
#include "kernels/util/scatter_view.h"

namespace et::kernels {
namespace {

Status select_scatter_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* src, ctx.input(1));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(int64_t index, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dim() == 0) return ctx.fail("cannot select from a 0-d tensor");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  const int64_t n = self->size(dim);
  if (index < -n || index >= n) {
    return ctx.fail(fmt::format("index {} is out of range for dim {} of size {}", index, dim, n));
  }
  if (index < 0) index += n;
  Shape slice;
  for (int d = 0; d < self->dim(); ++d) {
    if (d != dim) slice.sizes[slice.rank++] = self->size(d);
  }
  if (src->dim() != slice.rank ||
      !std::equal(src->sizes().begin(), src->sizes().end(), slice.sizes.begin())) {
    return ctx.fail(fmt::format("src of shape {} does not match the slice of shape {}",
                                shape_string(src->sizes()), shape_string(slice.view())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
  ET_RETURN_IF_ERROR(copy_logical(ctx, *self, *out));
  if (src->numel() == 0) return Status();
  std::array<int64_t, kMaxRank> dst_strides{};
  for (int d = 0, s = 0; d < self->dim(); ++d) {
    if (d != dim) dst_strides[s++] = out->stride(d);
  }
  auto* dst = static_cast<uint8_t*>(out->mutable_data()) +
              index * out->stride(dim) * static_cast<int64_t>(out->element_size());
  return copy_into_view(ctx, slice, *src, *out, dst, dst_strides.data());
}

ET_REGISTER_KERNEL("aten::select_scatter.out", select_scatter_out);

}  // namespace
}  // namespace et::kernels
