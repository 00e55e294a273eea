// aten::topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True,
//     bool sorted=True, *, Tensor(a!) values, Tensor(b!) indices)
// Always returns the k values in sorted order (a valid answer for sorted=False too).
#include <fmt/format.h>

#include "kernels/ops/op_sort_topk.h"
#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status topk_values(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t k, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(bool largest, ctx.bool_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * values, ctx.output(5));
  ET_ASSIGN_OR_RETURN(Tensor * indices, ctx.output(6));
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  const int64_t n = self->dim() == 0 ? 1 : self->size(dim);
  if (k < 0 || k > n)
    return ctx.fail(fmt::format("k={} is out of range for a dim of size {}", k, n));
  Shape shape = shape_of(*self);
  if (shape.rank > 0) shape.sizes[dim] = k;
  ET_RETURN_IF_ERROR(resize_output(ctx, *values, shape));
  ET_RETURN_IF_ERROR(resize_output(ctx, *indices, shape));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < self->dim(); ++d) (d < dim ? outer : inner) *= d == dim ? 1 : self->size(d);
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = std::conditional_t<std::is_same_v<decltype(zero), bool>, int64_t, decltype(zero)>;
    ET_ASSIGN_OR_RETURN(const C* x, dense_as<C>(ctx, *self));
    ET_ASSIGN_OR_RETURN(C * v, dense_result<C>(ctx, *values));
    ET_ASSIGN_OR_RETURN(int64_t * ix, dense_result<int64_t>(ctx, *indices));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const C* line = x + o * n * inner + i;
        const auto order = ordered_indices(line, inner, n, largest);
        for (int64_t j = 0; j < k; ++j) {
          v[(o * k + j) * inner + i] = line[order[j] * inner];
          ix[(o * k + j) * inner + i] = order[j];
        }
      }
    }
    ET_RETURN_IF_ERROR(store_dense<int64_t>(ctx, ix, *indices));
    return store_dense<C>(ctx, v, *values);
  });
}

ET_REGISTER_KERNEL("aten::topk.values", topk_values);

}  // namespace
}  // namespace et::kernels
