// aten::scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *,
//     Tensor(a!) out)
// out = self, then out[index[i][j]][j] = value for dim 0 (likewise for other dims).
#include <fmt/format.h>

#include "kernels/util/convert.h"
#include "kernels/util/index_util.h"

namespace et::kernels {
namespace {

Status scatter_value_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(const Tensor* index, ctx.input(2));
  ET_ASSIGN_OR_RETURN(Scalar value, ctx.scalar_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
  ET_RETURN_IF_ERROR(copy_logical(ctx, *self, *out));
  if (index->numel() == 0) {
    // An empty index writes nothing, whatever its rank; it must still be an index.
    ET_RETURN_IF_ERROR(checked_indices(ctx, *index, 0).status());
    return Status();
  }
  if (index->dim() != self->dim()) {
    return ctx.fail(fmt::format("index of rank {} for self of rank {}", index->dim(), self->dim()));
  }
  for (int d = 0; d < self->dim(); ++d) {
    if (d != dim && index->size(d) > self->size(d)) {
      return ctx.fail(fmt::format("index {} does not fit self {} outside dim {}",
                                  shape_string(index->sizes()), shape_string(self->sizes()), dim));
    }
  }
  ET_ASSIGN_OR_RETURN(const int64_t* idx,
                      checked_indices(ctx, *index, self->dim() == 0 ? 1 : self->size(dim)));
  const Shape shape = shape_of(*index);
  const bool ok = visit_dtype(out->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = scalar_as<T>(value);
    T* o = out->data_as<T>();
    std::array<int64_t, kMaxRank> pos{};
    for (int64_t n = 0; n < index->numel(); ++n) {
      int64_t to = 0;
      for (int d = 0; d < shape.rank; ++d) to += (d == dim ? idx[n] : pos[d]) * out->stride(d);
      o[to] = v;
      for (int d = shape.rank - 1; d >= 0; --d) {
        if (++pos[d] < shape.sizes[d]) break;
        pos[d] = 0;
      }
    }
  });
  return ok ? Status() : ctx.unsupported("dtype is not supported");
}

ET_REGISTER_KERNEL("aten::scatter.value_out", scatter_value_out);

}  // namespace
}  // namespace et::kernels
