#include "kernels/util/reduce.h"

#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {

Result<ReducePlan> plan_reduction(const KernelContext& ctx, const Tensor& in,
                                  std::optional<std::span<const int64_t>> dims, bool keepdim) {
  ReducePlan plan;
  plan.input = shape_of(in);
  if (!dims || dims->empty()) {
    for (int d = 0; d < in.dim(); ++d) plan.reduced[d] = true;
  } else {
    for (int64_t d : *dims) {
      ET_ASSIGN_OR_RETURN(int w, wrap_dim(ctx, d, in.dim()));
      if (in.dim() == 0) continue;
      if (plan.reduced[w]) return ctx.fail(fmt::format("dim {} is reduced twice", w));
      plan.reduced[w] = true;
    }
  }
  const std::array<int64_t, kMaxRank> row_major = row_major_strides(plan.input);
  for (int d = 0; d < in.dim(); ++d) {
    if (plan.reduced[d]) {
      plan.over_strides[plan.over.rank] = row_major[d];
      plan.over.sizes[plan.over.rank++] = in.size(d);
      plan.over_count *= in.size(d);
      if (keepdim) plan.out.sizes[plan.out.rank++] = 1;
    } else {
      plan.kept_strides[plan.kept.rank] = row_major[d];
      plan.kept.sizes[plan.kept.rank++] = in.size(d);
      plan.out.sizes[plan.out.rank++] = in.size(d);
    }
  }
  return plan;
}

namespace {

// Sum of n floats in double, eight partial sums (so the loop vectorizes).
double sum_run(const float* v, int64_t n) {
  double acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += static_cast<double>(v[i + k]);
  double total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) total += static_cast<double>(v[i]);
  return total;
}

}  // namespace

Result<bool> sum_contiguous_runs(const KernelContext& ctx, const Tensor& in, const ReducePlan& plan,
                                 Tensor& out, double divisor) {
  if (in.dtype() != ScalarType::kFloat || !in.is_contiguous() || in.numel() == 0) return false;
  if (out.dtype() != ScalarType::kFloat && out.dtype() != ScalarType::kDouble) return false;
  bool reducing = false;
  for (int d = 0; d < plan.input.rank; ++d) {
    if (plan.input.sizes[d] == 1) continue;  // size-one dims do not change the layout
    if (plan.reduced[d])
      reducing = true;
    else if (reducing)
      return false;  // a kept dim after a reduced one: runs are strided
  }
  if (!out.is_contiguous()) return false;
  ET_RETURN_IF_ERROR(resize_output(ctx, out, plan.out));
  const float* src = in.data_as<const float>();
  const int64_t run = plan.over_count;
  for (int64_t i = 0, n = out.numel(); i < n; ++i) {
    const double value = sum_run(src + i * run, run) / divisor;
    if (out.dtype() == ScalarType::kFloat)
      out.data_as<float>()[i] = static_cast<float>(value);
    else
      out.data_as<double>()[i] = value;
  }
  return true;
}

}  // namespace et::kernels
