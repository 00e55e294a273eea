// aten::pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out)
// [..., C*r*r, H, W] -> [..., C, H*r, W*r]:
//   out[..., c, h*r + i, w*r + j] = self[..., c*r*r + i*r + j, h, w].
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status pixel_shuffle_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t r, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  const int rank = self->dim();
  if (rank < 3) return ctx.fail(fmt::format("pixel_shuffle expects rank >= 3, got {}", rank));
  if (rank + 2 > kMaxRank) return ctx.unsupported("pixel_shuffle of a tensor of rank above 14");
  if (r <= 0 || r > (int64_t{1} << 31)) {
    return ctx.fail(fmt::format("upscale_factor {} is out of range", r));
  }
  const int c = rank - 3, h = rank - 2, w = rank - 1;
  const int64_t channels = self->size(c);
  if (channels % (r * r) != 0) {
    return ctx.fail(fmt::format("{} channels are not divisible by the square of {}", channels, r));
  }
  Shape shape = shape_of(*self);
  shape.sizes[c] = channels / (r * r);
  shape.sizes[h] = self->size(h) * r;
  shape.sizes[w] = self->size(w) * r;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  // Walk [..., C, H, r (i), W, r (j)] over both tensors.
  StridedWalk walk = StridedWalk::leading(*self, *out, c);
  walk.add(shape.sizes[c], self->stride(c) * r * r, out->stride(c));
  walk.add(self->size(h), self->stride(h), out->stride(h) * r);
  walk.add(r, self->stride(c) * r, out->stride(h));
  walk.add(self->size(w), self->stride(w), out->stride(w) * r);
  walk.add(r, self->stride(c), out->stride(w));
  walk.copy(*self, *out);
  return Status();
}

ET_REGISTER_KERNEL("aten::pixel_shuffle.out", pixel_shuffle_out);

}  // namespace
}  // namespace et::kernels
