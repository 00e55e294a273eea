// aten::select_copy.int_out(Tensor self, int dim, SymInt index, *, Tensor(a!) out)
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status select_copy_int_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t index, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dim() == 0) return ctx.fail("cannot select from a 0-d tensor");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  const int64_t n = self->size(dim);
  if (index < -n || index >= n) {
    return ctx.fail(fmt::format("index {} is out of range for dim {} of size {}", index, dim, n));
  }
  if (index < 0) index += n;
  Shape shape;
  std::array<int64_t, kMaxRank> src_strides{};
  for (int d = 0; d < self->dim(); ++d) {
    if (d == dim) continue;
    src_strides[shape.rank] = self->stride(d);
    shape.sizes[shape.rank++] = self->size(d);
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  const auto* base = static_cast<const uint8_t*>(self->data()) +
                     index * self->stride(dim) * static_cast<int64_t>(self->element_size());
  strided_copy(shape, base, src_strides.data(), out->mutable_data(), out->strides().data(),
               self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::select_copy.int_out", select_copy_int_out);

}  // namespace
}  // namespace et::kernels
