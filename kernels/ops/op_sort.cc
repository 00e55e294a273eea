// aten::sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values,
//     Tensor(b!) indices)
#include "kernels/ops/op_sort_topk.h"

namespace et::kernels {
namespace {

Status sort_values(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(bool descending, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * values, ctx.output(3));
  ET_ASSIGN_OR_RETURN(Tensor * indices, ctx.output(4));
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = std::conditional_t<std::is_same_v<decltype(zero), bool>, int64_t, decltype(zero)>;
    ET_RETURN_IF_ERROR(map_along_dim<C>(ctx, *self, dim, *values,
                                        [&](const C* in, int64_t is, C* o, int64_t os, int64_t n) {
                                          const auto order = ordered_indices(in, is, n, descending);
                                          for (int64_t i = 0; i < n; ++i)
                                            o[i * os] = in[order[i] * is];
                                        }));
    return map_along_dim<C>(ctx, *self, dim, *indices,
                            [&](const C* in, int64_t is, C* o, int64_t os, int64_t n) {
                              const auto order = ordered_indices(in, is, n, descending);
                              for (int64_t i = 0; i < n; ++i) o[i * os] = static_cast<C>(order[i]);
                            });
  });
}

ET_REGISTER_KERNEL("aten::sort.values", sort_values);

}  // namespace
}  // namespace et::kernels
