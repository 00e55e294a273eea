// aten::t_copy.out(Tensor self, *, Tensor(a!) out)
// The transpose of a matrix; a tensor of rank 0 or 1 is copied unchanged.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status t_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dim() > 2) {
    return ctx.fail(
        fmt::format("t() expects a tensor with <= 2 dimensions, but self is {}-d", self->dim()));
  }
  Shape shape = shape_of(*self);
  std::array<int64_t, kMaxRank> src_strides{};
  for (int d = 0; d < self->dim(); ++d) src_strides[d] = self->stride(d);
  if (self->dim() == 2) {
    std::swap(shape.sizes[0], shape.sizes[1]);
    std::swap(src_strides[0], src_strides[1]);
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  strided_copy(shape, self->data(), src_strides.data(), out->mutable_data(), out->strides().data(),
               self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::t_copy.out", t_copy_out);

}  // namespace
}  // namespace et::kernels
