// aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max,
//     Tensor(b!) max_values) -> (values, indices)
#include "kernels/arg_reduce.h"

namespace et::kernels {
namespace {

Status max_dim_max(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * values, ctx.output(3));
  ET_ASSIGN_OR_RETURN(Tensor * indices, ctx.output(4));
  if (self->numel() == 0) return ctx.fail("cannot reduce an empty tensor");
  ET_ASSIGN_OR_RETURN(ReducePlan plan,
                      plan_reduction(ctx, *self, std::span<const int64_t>(&dim, 1), keepdim));
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    ET_RETURN_IF_ERROR(reduce_each<C, C>(
        ctx, *self, plan, *values,
        [](const C* base, const ReducePlan& p) { return extreme<true>(base, p).first; }));
    return reduce_each<C, int64_t>(
        ctx, *self, plan, *indices,
        [](const C* base, const ReducePlan& p) { return extreme<true>(base, p).second; });
  });
}

ET_REGISTER_KERNEL("aten::max.dim_max", max_dim_max);

}  // namespace
}  // namespace et::kernels
