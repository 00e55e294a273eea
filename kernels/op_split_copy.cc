// aten::split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *,
//     Tensor(a!)[] out) -> ()
// Chunks of split_size along dim, the last one smaller when the size does not divide.
#include <fmt/format.h>

#include "kernels/copy_util.h"

namespace et::kernels {
namespace {

Status split_copy_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t split_size, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(auto outs, ctx.tensor_list_arg(3));
  if (self->dim() == 0) return ctx.fail("cannot split a 0-d tensor");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  const int64_t n = self->size(dim);
  if (split_size < 0) return ctx.fail(fmt::format("split size {} is negative", split_size));
  if (split_size == 0 && n != 0) {
    return ctx.fail(fmt::format("split size can only be 0 if dim {} is empty, not {}", dim, n));
  }
  // split_size may be any int64: the count is taken without adding to it.
  const int64_t chunks =
      split_size == 0 ? 1 : std::max<int64_t>(1, n / split_size + (n % split_size != 0));
  if (static_cast<int64_t>(outs.size()) != chunks) {
    return ctx.fail(fmt::format("{} outputs for {} chunks", outs.size(), chunks));
  }
  int64_t offset = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    Tensor* out = outs[k];
    if (out == nullptr || out->is_constant())
      return ctx.fail(fmt::format("output {} is not writable", k));
    if (out->dtype() != self->dtype()) return ctx.fail("input and output dtypes differ");
    Shape shape = shape_of(*self);
    shape.sizes[dim] = std::min(split_size, n - offset);
    ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
    if (out->numel() > 0) {
      if (out->data() == nullptr) return ctx.fail(fmt::format("output {} has no memory", k));
      const auto* src = static_cast<const uint8_t*>(self->data()) +
                        offset * self->stride(dim) * static_cast<int64_t>(self->element_size());
      strided_copy(shape, src, self->strides().data(), out->mutable_data(), out->strides().data(),
                   self->element_size());
    }
    offset += shape.sizes[dim];
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::split_copy.Tensor_out", split_copy_tensor_out);

}  // namespace
}  // namespace et::kernels
