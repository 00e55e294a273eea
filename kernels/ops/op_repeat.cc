// aten::repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out)
#include <fmt/format.h>

#include <cstring>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status repeat_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto repeats, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  const int rank = static_cast<int>(repeats.size());
  if (rank < self->dim() || rank > kMaxRank) {
    return ctx.fail(fmt::format("{} repeats for a rank-{} tensor", rank, self->dim()));
  }
  Shape shape, tile;
  shape.rank = tile.rank = rank;
  const int lead = rank - self->dim();
  for (int d = 0; d < rank; ++d) {
    if (repeats[d] < 0 || repeats[d] > (int64_t{1} << 31))
      return ctx.fail("a repeat count is out of range");
    tile.sizes[d] = d >= lead ? self->size(d - lead) : 1;
    shape.sizes[d] = tile.sizes[d] * repeats[d];
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  // Each output element reads the input at (index mod tile size): a strided walk over
  // [repeats..., tile...] split dims would do the same; this keeps it simple.
  const int64_t elsize = static_cast<int64_t>(self->element_size());
  const auto* in = static_cast<const uint8_t*>(self->data());
  auto* o = static_cast<uint8_t*>(out->mutable_data());
  std::array<int64_t, kMaxRank> pos{};
  for (int64_t n = 0; n < out->numel(); ++n) {
    int64_t src = 0, dst = 0;
    for (int d = 0; d < rank; ++d) {
      if (d >= lead) src += (pos[d] % tile.sizes[d]) * self->stride(d - lead);
      dst += pos[d] * out->stride(d);
    }
    std::memmove(o + dst * elsize, in + src * elsize, static_cast<size_t>(elsize));
    for (int d = rank - 1; d >= 0; --d) {
      if (++pos[d] < shape.sizes[d]) break;
      pos[d] = 0;
    }
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::repeat.out", repeat_out);

}  // namespace
}  // namespace et::kernels
