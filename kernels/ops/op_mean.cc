// aten::mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None,
//     Tensor(a!) out)
// aten::mean.dtype_out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out)
#include "kernels/util/reduce.h"

namespace et::kernels {
namespace {

Status mean(KernelContext& ctx, const Tensor& self, std::optional<std::span<const int64_t>> dims,
            bool keepdim, Tensor& out) {
  if (!is_floating(out.dtype())) return ctx.fail("mean needs a floating-point output dtype");
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, self, dims, keepdim));
  ET_ASSIGN_OR_RETURN(
      bool done, sum_contiguous_runs(ctx, self, plan, out, static_cast<double>(plan.over_count)));
  if (done) return Status();
  return reduce_each<double, double>(ctx, self, plan, out,
                                     [](const double* base, const ReducePlan& p) {
                                       double acc = 0;
                                       if (base)
                                         for_each_reduced(p, base, [&](double v) { acc += v; });
                                       return acc / static_cast<double>(p.over_count);
                                     });
}

Status mean_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.optional_int_list_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  return mean(ctx, *self, dims, keepdim, *out);
}

Status mean_dtype_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return mean(ctx, *self, std::nullopt, false, *out);
}

ET_REGISTER_KERNEL("aten::mean.out", mean_out);
ET_REGISTER_KERNEL("aten::mean.dtype_out", mean_dtype_out);

}  // namespace
}  // namespace et::kernels
