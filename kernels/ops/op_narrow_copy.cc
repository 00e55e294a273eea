// aten::narrow_copy.out(Tensor self, int dim, SymInt start, SymInt length, *,
//     Tensor(a!) out)
// Elements start .. start+length-1 of dim; a negative start counts from the end.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status narrow_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t start, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(int64_t length, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dim() == 0) return ctx.fail("cannot narrow a 0-d tensor");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  const int64_t n = self->size(dim);
  if (start < -n || start > n) {
    return ctx.fail(fmt::format("start {} is out of range for dim {} of size {}", start, dim, n));
  }
  if (start < 0) start += n;
  if (length < 0 || length > n - start) {
    return ctx.fail(
        fmt::format("start ({}) + length ({}) exceeds dimension size ({})", start, length, n));
  }
  Shape shape = shape_of(*self);
  shape.sizes[dim] = length;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  const auto* base = static_cast<const uint8_t*>(self->data()) +
                     start * self->stride(dim) * static_cast<int64_t>(self->element_size());
  strided_copy(shape, base, self->strides().data(), out->mutable_data(), out->strides().data(),
               self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::narrow_copy.out", narrow_copy_out);

}  // namespace
}  // namespace et::kernels
