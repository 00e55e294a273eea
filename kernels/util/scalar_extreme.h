// aten::max.unary_out / aten::min.unary_out(Tensor self, *, Tensor(a!) out): the
// largest or smallest element as a 0-d tensor. NaN wins; an empty input fails (as in
// PyTorch). Each op's file registers its instantiation.
#pragma once

#include "kernels/util/arg_reduce.h"

namespace et::kernels {

template <bool kMax>
Status max_min_unary_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (self->numel() == 0) return ctx.fail("cannot reduce an empty tensor");
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, *self, std::nullopt, false));
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    return reduce_each<C, C>(ctx, *self, plan, *out, [](const C* base, const ReducePlan& p) {
      return extreme<kMax>(base, p).first;
    });
  });
}

}  // namespace et::kernels
