// aten::argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out)
#include "kernels/arg_reduce.h"

namespace et::kernels {
namespace {

Status argmax_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dim, ctx.optional_int_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->numel() == 0) return ctx.fail("cannot reduce an empty tensor");
  std::optional<std::span<const int64_t>> dims;
  int64_t d = dim.value_or(0);
  if (dim) dims = std::span<const int64_t>(&d, 1);
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, *self, dims, dim ? keepdim : false));
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    return reduce_each<C, int64_t>(ctx, *self, plan, *out, [](const C* base, const ReducePlan& p) {
      return extreme<true>(base, p).second;
    });
  });
}

ET_REGISTER_KERNEL("aten::argmax.out", argmax_out);

}  // namespace
}  // namespace et::kernels
