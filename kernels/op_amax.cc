// aten::amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out)
// NaN wins, as in PyTorch.
#include "kernels/reduce.h"

namespace et::kernels {
namespace {

Status amax_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->numel() == 0) return ctx.fail("cannot reduce an empty tensor");
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, *self, dims, keepdim));
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    return reduce_each<C, C>(ctx, *self, plan, *out, [](const C* base, const ReducePlan& p) {
      C best = base[0];
      for_each_reduced(p, base, [&](C v) {
        if constexpr (std::is_floating_point_v<C>) {
          if (v != v || best != best) {
            best = best != best ? best : v;
            return;
          }
        }
        if (v > best) best = v;
      });
      return best;
    });
  });
}

ET_REGISTER_KERNEL("aten::amax.out", amax_out);

}  // namespace
}  // namespace et::kernels
