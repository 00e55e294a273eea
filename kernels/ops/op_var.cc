// aten::var.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None,
//     bool keepdim=False, Tensor(a!) out)
// Two passes in double: the mean, then the squared deviations.
#include <algorithm>

#include "kernels/util/reduce.h"

namespace et::kernels {
namespace {

Status var_correction_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.optional_int_list_arg(1));
  ET_ASSIGN_OR_RETURN(auto correction, ctx.optional_scalar_arg(2));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (!is_floating(self->dtype())) return ctx.fail("var needs a floating-point input");
  const double c = correction ? correction->to_double() : 1.0;
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, *self, dims, keepdim));
  return reduce_each<double, double>(
      ctx, *self, plan, *out, [c](const double* base, const ReducePlan& p) {
        double mean = 0;
        if (base) for_each_reduced(p, base, [&](double v) { mean += v; });
        mean /= static_cast<double>(p.over_count);
        double acc = 0;
        if (base) for_each_reduced(p, base, [&](double v) { acc += (v - mean) * (v - mean); });
        return acc / std::max(0.0, static_cast<double>(p.over_count) - c);
      });
}

ET_REGISTER_KERNEL("aten::var.correction_out", var_correction_out);

}  // namespace
}  // namespace et::kernels
