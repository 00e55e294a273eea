// aten::flip.out(Tensor self, int[] dims, *, Tensor(a!) out)
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status flip_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  const Shape shape = shape_of(*self);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (self->numel() == 0) return Status();
  std::array<int64_t, kMaxRank> strides{};
  for (int d = 0; d < self->dim(); ++d) strides[d] = self->stride(d);
  int64_t offset = 0;
  std::array<bool, kMaxRank> flipped{};
  for (int64_t d : dims) {
    ET_ASSIGN_OR_RETURN(int w, wrap_dim(ctx, d, self->dim()));
    if (self->dim() == 0 || flipped[w]) continue;
    flipped[w] = true;
    offset += (self->size(w) - 1) * strides[w];
    strides[w] = -strides[w];
  }
  const int64_t elsize = static_cast<int64_t>(self->element_size());
  strided_copy(shape, static_cast<const uint8_t*>(self->data()) + offset * elsize, strides.data(),
               out->mutable_data(), out->strides().data(), self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::flip.out", flip_out);

}  // namespace
}  // namespace et::kernels
