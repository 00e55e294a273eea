// aten::gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False,
//     Tensor(a!) out)
// out[i][j][k] = self[index[i][j][k]][j][k] (for dim 0), out shaped like index.
#include <fmt/format.h>

#include <cstring>

#include "kernels/util/index_util.h"

namespace et::kernels {
namespace {

Status gather_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(const Tensor* index, ctx.input(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (index->dim() != self->dim()) return ctx.fail("index must have the input's rank");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  for (int d = 0; d < self->dim(); ++d) {
    if (d != dim && index->size(d) > self->size(d)) {
      return ctx.fail(fmt::format("index {} is larger than the input {} outside dim {}",
                                  shape_string(index->sizes()), shape_string(self->sizes()), dim));
    }
  }
  ET_ASSIGN_OR_RETURN(const int64_t* idx,
                      checked_indices(ctx, *index, self->dim() == 0 ? 1 : self->size(dim)));
  const Shape shape = shape_of(*index);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  const int64_t elsize = static_cast<int64_t>(self->element_size());
  const auto* in = static_cast<const uint8_t*>(self->data());
  auto* o = static_cast<uint8_t*>(out->mutable_data());
  std::array<int64_t, kMaxRank> pos{};
  for (int64_t n = 0; n < index->numel(); ++n) {
    int64_t src = 0, dst = 0;
    for (int d = 0; d < shape.rank; ++d) {
      src += (d == dim ? idx[n] : pos[d]) * self->stride(d);
      dst += pos[d] * out->stride(d);
    }
    std::memmove(o + dst * elsize, in + src * elsize, static_cast<size_t>(elsize));
    for (int d = shape.rank - 1; d >= 0; --d) {
      if (++pos[d] < shape.sizes[d]) break;
      pos[d] = 0;
    }
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::gather.out", gather_out);

}  // namespace
}  // namespace et::kernels
