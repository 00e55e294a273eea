// aten::constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *, Tensor(a!) out)
// pad lists (before, after) pairs from the last dim backwards; negative values crop.
#include <fmt/format.h>

#include <cstdlib>

#include "kernels/util/copy_util.h"
#include "kernels/util/fill.h"

namespace et::kernels {
namespace {

Status constant_pad_nd_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto pad, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Scalar value, ctx.scalar_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (pad.size() % 2 != 0 || static_cast<int>(pad.size()) > 2 * self->dim()) {
    return ctx.fail(fmt::format("{} padding values for a rank-{} tensor", pad.size(), self->dim()));
  }
  Shape shape = shape_of(*self);
  std::array<int64_t, kMaxRank> before{};
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int d = self->dim() - 1 - static_cast<int>(i);
    constexpr int64_t kMaxPad = int64_t{1} << 30;  // bounded before any arithmetic
    if (pad[2 * i] < -kMaxPad || pad[2 * i] > kMaxPad || pad[2 * i + 1] < -kMaxPad ||
        pad[2 * i + 1] > kMaxPad) {
      return ctx.fail("a padding value is out of range");
    }
    before[d] = pad[2 * i];
    shape.sizes[d] += pad[2 * i] + pad[2 * i + 1];
    if (shape.sizes[d] < 0) return ctx.fail("padding crops a dim below size zero");
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  ET_RETURN_IF_ERROR(fill_with(ctx, *out, value));
  // Copy the overlap of the input and the padded box.
  Shape overlap;
  overlap.rank = self->dim();
  int64_t src_offset = 0, dst_offset = 0;
  for (int d = 0; d < self->dim(); ++d) {
    const int64_t src_start = std::max<int64_t>(0, -before[d]);
    const int64_t dst_start = std::max<int64_t>(0, before[d]);
    overlap.sizes[d] =
        std::max<int64_t>(0, std::min(self->size(d) - src_start, shape.sizes[d] - dst_start));
    src_offset += src_start * self->stride(d);
    dst_offset += dst_start * out->stride(d);
  }
  int64_t count = 1;
  for (int d = 0; d < overlap.rank; ++d) count *= overlap.sizes[d];
  if (count == 0) return Status();
  const int64_t elsize = static_cast<int64_t>(self->element_size());
  strided_copy(overlap, static_cast<const uint8_t*>(self->data()) + src_offset * elsize,
               self->strides().data(),
               static_cast<uint8_t*>(out->mutable_data()) + dst_offset * elsize,
               out->strides().data(), self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::constant_pad_nd.out", constant_pad_nd_out);

}  // namespace
}  // namespace et::kernels
