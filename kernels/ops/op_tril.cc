// aten::tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out)
// Keeps the elements of each matrix (the last two dims) on and below the diagonal,
// col - row <= diagonal, and zeroes the rest. Any dtype: elements are copied as bytes.
#include <cstring>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status tril_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t diagonal, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dim() < 2) return ctx.fail("tril needs a tensor of at least 2 dims");
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  const Shape shape = shape_of(*self);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  const int rank = shape.rank;
  const int64_t rows = shape.sizes[rank - 2], cols = shape.sizes[rank - 1];
  const int64_t in_row = self->stride(rank - 2), in_col = self->stride(rank - 1);
  const int64_t out_row = out->stride(rank - 2), out_col = out->stride(rank - 1);
  const size_t elsize = out->element_size();
  const auto* in = static_cast<const uint8_t*>(self->data());
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  Shape batch = shape;
  batch.rank = rank - 2;
  const std::array<const int64_t*, 2> strides = {self->strides().data(), out->strides().data()};
  for_each_index<2>(batch, strides, [&](const std::array<int64_t, 2>& base) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        uint8_t* o = dst + (base[1] + r * out_row + c * out_col) * static_cast<int64_t>(elsize);
        if (c - r <= diagonal) {
          std::memmove(o, in + (base[0] + r * in_row + c * in_col) * static_cast<int64_t>(elsize),
                       elsize);
        } else {
          std::memset(o, 0, elsize);
        }
      }
    }
  });
  return Status();
}

ET_REGISTER_KERNEL("aten::tril.out", tril_out);

}  // namespace
}  // namespace et::kernels
