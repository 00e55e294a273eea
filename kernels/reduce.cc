#include "kernels/reduce.h"

#include <fmt/format.h>

#include "kernels/copy_util.h"

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

}  // namespace et::kernels
