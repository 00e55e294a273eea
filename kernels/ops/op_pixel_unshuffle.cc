// aten::pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out)
// [..., C, H*r, W*r] -> [..., C*r*r, H, W]:
//   out[..., c*r*r + i*r + j, h, w] = self[..., c, h*r + i, w*r + j].
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status pixel_unshuffle_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t r, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  const int rank = self->dim();
  if (rank < 3) return ctx.fail(fmt::format("pixel_unshuffle expects rank >= 3, got {}", rank));
  if (rank + 2 > kMaxRank) return ctx.unsupported("pixel_unshuffle of a tensor of rank above 14");
  if (r <= 0 || r > (int64_t{1} << 31)) {
    return ctx.fail(fmt::format("downscale_factor {} is out of range", r));
  }
  const int c = rank - 3, h = rank - 2, w = rank - 1;
  if (self->size(h) % r != 0 || self->size(w) % r != 0) {
    return ctx.fail(fmt::format("height {} and width {} must be divisible by {}", self->size(h),
                                self->size(w), r));
  }
  Shape shape = shape_of(*self);
  if (__builtin_mul_overflow(self->size(c), r * r, &shape.sizes[c])) {
    return ctx.fail("the output channel count overflows");
  }
  shape.sizes[h] = self->size(h) / r;
  shape.sizes[w] = self->size(w) / r;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  // Walk [..., C, r (i), r (j), H, W] over both tensors.
  StridedWalk walk = StridedWalk::leading(*self, *out, c);
  walk.add(self->size(c), self->stride(c), out->stride(c) * r * r);
  walk.add(r, self->stride(h), out->stride(c) * r);
  walk.add(r, self->stride(w), out->stride(c));
  walk.add(shape.sizes[h], self->stride(h) * r, out->stride(h));
  walk.add(shape.sizes[w], self->stride(w) * r, out->stride(w));
  walk.copy(*self, *out);
  return Status();
}

ET_REGISTER_KERNEL("aten::pixel_unshuffle.out", pixel_unshuffle_out);

}  // namespace
}  // namespace et::kernels
