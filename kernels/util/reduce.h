// Reductions over some dims of a tensor (sum, mean, amax, argmax, var, softmax's row
// pass, ...): which dims are reduced, the output shape, and a driver that hands each
// output element the values it reduces.
#pragma once

#include <array>
#include <optional>
#include <span>

#include "kernels/util/elementwise.h"

namespace et::kernels {

struct ReducePlan {
  Shape input;                           // the input's shape
  std::array<bool, kMaxRank> reduced{};  // per input dim
  Shape out;                             // the output's shape (size-one dims kept if keepdim)
  Shape kept;                            // the input's non-reduced dims
  Shape over;                            // the input's reduced dims
  std::array<int64_t, kMaxRank> kept_strides{}, over_strides{};  // into a row-major copy
  int64_t over_count = 1;  // elements reduced into each output
};

// dims absent or empty: every dim. Repeated or out-of-range dims are InvalidArgument.
Result<ReducePlan> plan_reduction(const KernelContext& ctx, const Tensor& in,
                                  std::optional<std::span<const int64_t>> dims, bool keepdim);

// The common fast case of a floating sum (a mean over H and W, a sum over the last dim):
// `in` is float32 and contiguous, `out` float32 or float64 and contiguous, and no
// reduced dim comes before a kept one, so each output element's values are one
// contiguous run of `in`. Writes out[i] = (the run's sum, in double) / divisor, with no
// converted copy of `in`. Returns false, having done nothing, when the case does not
// apply (the caller then takes the general path).
Result<bool> sum_contiguous_runs(const KernelContext& ctx, const Tensor& in, const ReducePlan& plan,
                                 Tensor& out, double divisor);

// Visits the reduced values for one output element, in row-major order.
template <typename C, typename Visit>
void for_each_reduced(const ReducePlan& plan, const C* base, Visit&& visit) {
  const std::array<const int64_t*, 1> strides = {plan.over_strides.data()};
  for_each_index<1>(plan.over, strides,
                    [&](const std::array<int64_t, 1>& o) { visit(base[o[0]]); });
}

// Resizes out to plan.out and sets each output element to fn(base, plan), where base
// points at the element's first value in a row-major copy of `in` converted to C.
// fn returns R; the result is converted to out's dtype.
template <typename C, typename R, typename Fn>
Status reduce_each(const KernelContext& ctx, const Tensor& in, const ReducePlan& plan, Tensor& out,
                   Fn&& fn) {
  ET_RETURN_IF_ERROR(resize_output(ctx, out, plan.out));
  if (out.numel() == 0) return Status();
  const std::array<int64_t, kMaxRank> row_major = row_major_strides(plan.input);
  const C* values = nullptr;
  if (in.numel() > 0) {
    ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(static_cast<size_t>(in.numel()) * sizeof(C)));
    ET_RETURN_IF_ERROR(gather_as<C>(ctx, in, plan.input,
                                    {row_major.data(), static_cast<size_t>(plan.input.rank)},
                                    static_cast<C*>(scratch)));
    values = static_cast<C*>(scratch);
  }
  // Output strides seen from the kept input dims (reduced dims are dropped or size one).
  std::array<int64_t, kMaxRank> out_strides{};
  for (int d = 0, k = 0, o = 0; d < plan.input.rank; ++d) {
    const bool kept_dim = !plan.reduced[d];
    if (kept_dim) out_strides[k++] = out.stride(o);
    if (kept_dim || plan.out.rank == plan.input.rank) ++o;
  }
  R* dst;
  const bool direct = out.dtype() == scalar_type_of<R>();
  if (direct) {
    dst = out.data_as<R>();
  } else {
    ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(static_cast<size_t>(out.numel()) * sizeof(R)));
    dst = static_cast<R*>(scratch);
  }
  const std::array<const int64_t*, 2> strides = {plan.kept_strides.data(), out_strides.data()};
  for_each_index<2>(plan.kept, strides, [&](const std::array<int64_t, 2>& o) {
    dst[o[1]] = fn(values == nullptr ? nullptr : values + o[0], plan);
  });
  return direct ? Status() : scatter_to<R>(ctx, dst, out);
}

}  // namespace et::kernels
