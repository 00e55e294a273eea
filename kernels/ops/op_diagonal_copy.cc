// aten::diagonal_copy.out(Tensor self, int offset=0, int dim1=0, int dim2=1, *,
//     Tensor(a!) out)
// The diagonal of the (dim1, dim2) planes: both dims are removed and the diagonal
// becomes the last dim. offset > 0 starts above the main diagonal, < 0 below it.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status diagonal_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t offset, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t dim1_arg, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(int64_t dim2_arg, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dim() < 2) return ctx.fail("diagonal needs a tensor of rank 2 or more");
  ET_ASSIGN_OR_RETURN(int dim1, wrap_dim(ctx, dim1_arg, self->dim()));
  ET_ASSIGN_OR_RETURN(int dim2, wrap_dim(ctx, dim2_arg, self->dim()));
  if (dim1 == dim2) {
    return ctx.fail(fmt::format("diagonal dimensions cannot be identical {}, {}", dim1, dim2));
  }
  const int64_t n1 = self->size(dim1), n2 = self->size(dim2);
  // Compared before any arithmetic on offset, which may be any int64.
  int64_t length = 0, start = 0;
  if (offset >= 0 && offset < n2) {
    length = std::min(n1, n2 - offset);
    start = offset * self->stride(dim2);
  } else if (offset < 0 && offset > -n1) {
    length = std::min(n1 + offset, n2);
    start = -offset * self->stride(dim1);
  }
  Shape shape;
  std::array<int64_t, kMaxRank> src_strides{};
  for (int d = 0; d < self->dim(); ++d) {
    if (d == dim1 || d == dim2) continue;
    src_strides[shape.rank] = self->stride(d);
    shape.sizes[shape.rank++] = self->size(d);
  }
  src_strides[shape.rank] = self->stride(dim1) + self->stride(dim2);
  shape.sizes[shape.rank++] = length;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  const int64_t elsize = static_cast<int64_t>(self->element_size());
  strided_copy(shape, static_cast<const uint8_t*>(self->data()) + start * elsize,
               src_strides.data(), out->mutable_data(), out->strides().data(),
               self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::diagonal_copy.out", diagonal_copy_out);

}  // namespace
}  // namespace et::kernels
