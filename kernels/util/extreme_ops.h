// The max/min families, written once for both directions; each op's file registers
// its instantiation. NaN wins (propagates) and the first index of a tie is kept, as in
// PyTorch.
#pragma once

#include "kernels/util/arg_reduce.h"
#include "kernels/util/binary_op.h"

namespace et::kernels {

// aten::amax.out / aten::amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, out)
template <bool kMax>
Status amax_amin_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->numel() == 0) return ctx.fail("cannot reduce an empty tensor");
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, *self, dims, keepdim));
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    return reduce_each<C, C>(ctx, *self, plan, *out, [](const C* base, const ReducePlan& p) {
      return extreme<kMax>(base, p).first;
    });
  });
}

// aten::argmax.out / aten::argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, out)
template <bool kMax>
Status argmax_argmin_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dim, ctx.optional_int_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->numel() == 0) return ctx.fail("cannot reduce an empty tensor");
  std::optional<std::span<const int64_t>> dims;
  const int64_t d = dim.value_or(0);
  if (dim) dims = std::span<const int64_t>(&d, 1);
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, *self, dims, dim ? keepdim : false));
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    return reduce_each<C, int64_t>(ctx, *self, plan, *out, [](const C* base, const ReducePlan& p) {
      return extreme<kMax>(base, p).second;
    });
  });
}

// aten::max.dim_max / aten::min.dim_min(Tensor self, int dim, bool keepdim=False, *,
//     Tensor(a!) values, Tensor(b!) indices)
template <bool kMax>
Status max_min_dim_out(KernelContext& ctx) {
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
        [](const C* base, const ReducePlan& p) { return extreme<kMax>(base, p).first; }));
    return reduce_each<C, int64_t>(
        ctx, *self, plan, *indices,
        [](const C* base, const ReducePlan& p) { return extreme<kMax>(base, p).second; });
  });
}

// aten::maximum.out / aten::minimum.out(Tensor self, Tensor other, *, Tensor(a!) out)
template <bool kMax>
Status maximum_minimum_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return binary_arith(ctx, *self, *other, *out, [](auto x, auto y) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      if (x != x) return x;
      if (y != y) return y;
    }
    return (kMax ? x > y : x < y) ? x : y;
  });
}

}  // namespace et::kernels
