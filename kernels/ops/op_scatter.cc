// aten::scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out)
// aten::scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out)
// out = self, then out[index[i][j]][j] = src[i][j] (or +=) for dim 0.
#include <fmt/format.h>

#include "kernels/util/convert.h"
#include "kernels/util/index_util.h"
#include "kernels/util/integer_math.h"

namespace et::kernels {
namespace {

template <bool kAdd>
Status scatter(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(const Tensor* index, ctx.input(2));
  ET_ASSIGN_OR_RETURN(const Tensor* src, ctx.input(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (self->dtype() != out->dtype() || src->dtype() != out->dtype())
    return ctx.fail("dtypes differ");
  if (index->dim() != self->dim() || src->dim() != self->dim()) return ctx.fail("ranks differ");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  for (int d = 0; d < self->dim(); ++d) {
    if (index->size(d) > src->size(d) || (d != dim && index->size(d) > self->size(d))) {
      return ctx.fail(fmt::format("index {} does not fit src {} and self {}",
                                  shape_string(index->sizes()), shape_string(src->sizes()),
                                  shape_string(self->sizes())));
    }
  }
  ET_ASSIGN_OR_RETURN(const int64_t* idx,
                      checked_indices(ctx, *index, self->dim() == 0 ? 1 : self->size(dim)));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
  ET_RETURN_IF_ERROR(copy_logical(ctx, *self, *out));
  const Shape shape = shape_of(*index);
  bool ok = visit_dtype(out->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* s = src->data_as<const T>();
    T* o = out->data_as<T>();
    std::array<int64_t, kMaxRank> pos{};
    for (int64_t n = 0; n < index->numel(); ++n) {
      int64_t from = 0, to = 0;
      for (int d = 0; d < shape.rank; ++d) {
        from += pos[d] * src->stride(d);
        to += (d == dim ? idx[n] : pos[d]) * out->stride(d);
      }
      if constexpr (kAdd) {
        if constexpr (std::is_same_v<T, Bool8>) {
          o[to] = Bool8(static_cast<bool>(o[to]) || static_cast<bool>(s[from]));
        } else if constexpr (std::is_integral_v<T>) {
          o[to] = wrapping_add(o[to], s[from]);
        } else {
          o[to] = convert_value<T>(convert_value<double>(o[to]) + convert_value<double>(s[from]));
        }
      } else {
        o[to] = s[from];
      }
      for (int d = shape.rank - 1; d >= 0; --d) {
        if (++pos[d] < shape.sizes[d]) break;
        pos[d] = 0;
      }
    }
  });
  return ok ? Status() : ctx.unsupported("dtype is not supported");
}

ET_REGISTER_KERNEL("aten::scatter.src_out", scatter<false>);
ET_REGISTER_KERNEL("aten::scatter_add.out", scatter<true>);

}  // namespace
}  // namespace et::kernels
