// aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *,
//     ScalarType? dtype=None, Tensor(a!) out)
// Floats accumulate in double (float64 as well), integers and bool in int64.
#include "kernels/util/integer_math.h"
#include "kernels/util/reduce.h"

namespace et::kernels {
namespace {

Status sum_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.optional_int_list_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, *self, dims, keepdim));
  if (is_floating(self->dtype()) || is_floating(out->dtype())) {
    ET_ASSIGN_OR_RETURN(bool done, sum_contiguous_runs(ctx, *self, plan, *out, 1.0));
    if (done) return Status();
    return reduce_each<double, double>(ctx, *self, plan, *out,
                                       [](const double* base, const ReducePlan& p) {
                                         double acc = 0;
                                         if (base)
                                           for_each_reduced(p, base, [&](double v) { acc += v; });
                                         return acc;
                                       });
  }
  return reduce_each<int64_t, int64_t>(
      ctx, *self, plan, *out, [](const int64_t* base, const ReducePlan& p) {
        int64_t acc = 0;
        if (base) for_each_reduced(p, base, [&](int64_t v) { acc = wrapping_add(acc, v); });
        return acc;
      });
}

ET_REGISTER_KERNEL("aten::sum.IntList_out", sum_out);

}  // namespace
}  // namespace et::kernels
