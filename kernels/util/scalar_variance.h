// The variance reduction behind aten::var.out and aten::var_mean.correction_out (the
// same two passes in double as aten::var.correction_out): the mean, then the squared
// deviations divided by max(0, N - correction).
#pragma once

#include <algorithm>

#include "kernels/util/reduce.h"

namespace et::kernels {

// Writes the variance into `var` and, when given, the mean into `mean`.
inline Status variance(const KernelContext& ctx, const Tensor& self,
                       std::optional<std::span<const int64_t>> dims, double correction,
                       bool keepdim, Tensor& var, Tensor* mean) {
  if (!is_floating(self.dtype())) return ctx.fail("var needs a floating-point input");
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, self, dims, keepdim));
  const auto mean_of = [](const double* base, const ReducePlan& p) {
    double sum = 0;
    if (base) for_each_reduced(p, base, [&](double v) { sum += v; });
    return sum / static_cast<double>(p.over_count);
  };
  ET_RETURN_IF_ERROR(reduce_each<double, double>(
      ctx, self, plan, var, [&](const double* base, const ReducePlan& p) {
        const double m = mean_of(base, p);
        double acc = 0;
        if (base) for_each_reduced(p, base, [&](double v) { acc += (v - m) * (v - m); });
        return acc / std::max(0.0, static_cast<double>(p.over_count) - correction);
      }));
  if (mean == nullptr) return Status();
  return reduce_each<double, double>(ctx, self, plan, *mean, mean_of);
}

}  // namespace et::kernels
