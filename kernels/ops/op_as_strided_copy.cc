// aten::as_strided_copy.out(Tensor self, SymInt[] size, SymInt[] stride,
//     SymInt? storage_offset=None, *, Tensor(a!) out)
// Reads self's memory (its storage, in memory order) through the given sizes and
// strides; every element read must lie inside that memory.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status as_strided_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto sizes, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(auto strides, ctx.int_list_arg(2));
  ET_ASSIGN_OR_RETURN(auto offset, ctx.optional_int_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (sizes.size() != strides.size() || sizes.size() > kMaxRank)
    return ctx.fail("sizes and strides differ in length");
  Shape shape;
  shape.rank = static_cast<int>(sizes.size());
  int64_t reach = offset.value_or(0);
  if (reach < 0) return ctx.fail("storage_offset is negative");
  bool empty = false;
  for (int d = 0; d < shape.rank; ++d) {
    if (sizes[d] < 0 || strides[d] < 0) return ctx.fail("sizes and strides must not be negative");
    shape.sizes[d] = sizes[d];
    empty |= sizes[d] == 0;
    int64_t span = 0;
    if (sizes[d] > 0 && (__builtin_mul_overflow(sizes[d] - 1, strides[d], &span) ||
                         __builtin_add_overflow(reach, span, &reach))) {
      return ctx.fail("the view's extent overflows");
    }
  }
  if (!empty && reach >= self->numel()) {
    return ctx.fail(
        fmt::format("the view reaches element {} of a tensor with {}", reach, self->numel()));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (empty) return Status();
  const int64_t elsize = static_cast<int64_t>(self->element_size());
  strided_copy(shape, static_cast<const uint8_t*>(self->data()) + offset.value_or(0) * elsize,
               strides.data(), out->mutable_data(), out->strides().data(), self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::as_strided_copy.out", as_strided_copy_out);

}  // namespace
}  // namespace et::kernels
