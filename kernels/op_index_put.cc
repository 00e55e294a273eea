// aten::index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False,
//     *, Tensor(a!) out)
// Integer index tensors on leading dims (broadcast together); values broadcast to the
// indexed region. Later writes to the same place win (accumulate adds).
#include <fmt/format.h>

#include <vector>

#include "kernels/convert.h"
#include "kernels/index_util.h"
#include "kernels/integer_math.h"

namespace et::kernels {
namespace {

Status index_put_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto list, ctx.tensor_list_arg(1));
  ET_ASSIGN_OR_RETURN(const Tensor* values, ctx.input(2));
  ET_ASSIGN_OR_RETURN(bool accumulate, ctx.bool_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (self->dtype() != out->dtype() || values->dtype() != self->dtype())
    return ctx.fail("dtypes differ");
  if (list.empty() || static_cast<int>(list.size()) > self->dim())
    return ctx.fail("wrong number of indices");
  const size_t k = list.size();
  for (size_t d = 0; d < k; ++d) {
    if (list[d] == nullptr) return ctx.unsupported("None among the indices");
    if (list[d]->dtype() == ScalarType::kBool || list[d]->dtype() == ScalarType::kByte) {
      return ctx.unsupported("boolean mask indices");
    }
    if (list[d]->numel() != list[0]->numel() || list[d]->dim() > 1) {
      return ctx.unsupported("index tensors that are not 1-d of one length");
    }
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
  ET_RETURN_IF_ERROR(copy_logical(ctx, *self, *out));
  const int64_t count = list[0]->numel();
  std::vector<const int64_t*> idx(k);
  for (size_t d = 0; d < k; ++d) {
    ET_ASSIGN_OR_RETURN(idx[d], checked_indices(ctx, *list[d], self->size(static_cast<int>(d))));
  }
  // The region each index addresses: the remaining dims.
  Shape region;
  for (int d = static_cast<int>(k); d < self->dim(); ++d)
    region.sizes[region.rank++] = self->size(d);
  Shape target;  // [count, region...] for broadcasting values
  target.sizes[target.rank++] = count;
  for (int d = 0; d < region.rank; ++d) target.sizes[target.rank++] = region.sizes[d];
  int64_t region_count = 1;
  for (int d = 0; d < region.rank; ++d) region_count *= region.sizes[d];
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    ET_ASSIGN_OR_RETURN(void* scratch,
                        ctx.temp(static_cast<size_t>(count * region_count) * sizeof(C) + 1));
    C* v = static_cast<C*>(scratch);
    const std::array<int64_t, kMaxRank> dense = row_major_strides(target);
    ET_RETURN_IF_ERROR(
        gather_as<C>(ctx, *values, target, {dense.data(), static_cast<size_t>(target.rank)}, v));
    const bool ok = visit_dtype(out->dtype(), [&](auto out_zero) {
      using T = decltype(out_zero);
      T* o = out->data_as<T>();
      for (int64_t i = 0; i < count; ++i) {
        int64_t base = 0;
        for (size_t d = 0; d < k; ++d) base += idx[d][i] * out->stride(static_cast<int>(d));
        std::array<int64_t, kMaxRank> pos{};
        for (int64_t r = 0; r < region_count; ++r) {
          int64_t off = base;
          for (int d = 0; d < region.rank; ++d)
            off += pos[d] * out->stride(static_cast<int>(k) + d);
          const C value = v[i * region_count + r];
          o[off] = accumulate ? convert_value<T>(wrapping_add(convert_value<C>(o[off]), value))
                              : convert_value<T>(value);
          for (int d = region.rank - 1; d >= 0; --d) {
            if (++pos[d] < region.sizes[d]) break;
            pos[d] = 0;
          }
        }
      }
    });
    return ok ? Status() : ctx.unsupported("dtype is not supported");
  });
}

ET_REGISTER_KERNEL("aten::index_put.out", index_put_out);

}  // namespace
}  // namespace et::kernels
