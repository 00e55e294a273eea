// aten::prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None,
//     Tensor(a!) out)
// aten::prod.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out)
// The product over one dim, or over every element as a 0-d tensor. Floats multiply in
// double, integers and bool in int64 with wrapping.
#include "kernels/util/integer_math.h"
#include "kernels/util/reduce.h"

namespace et::kernels {
namespace {

Status product(const KernelContext& ctx, const Tensor& self, const ReducePlan& plan, Tensor& out) {
  if (is_floating(self.dtype()) || is_floating(out.dtype())) {
    return reduce_each<double, double>(ctx, self, plan, out,
                                       [](const double* base, const ReducePlan& p) {
                                         double acc = 1;
                                         if (base)
                                           for_each_reduced(p, base, [&](double v) { acc *= v; });
                                         return acc;
                                       });
  }
  return reduce_each<int64_t, int64_t>(
      ctx, self, plan, out, [](const int64_t* base, const ReducePlan& p) {
        int64_t acc = 1;
        if (base) for_each_reduced(p, base, [&](int64_t v) { acc = wrapping_mul(acc, v); });
        return acc;
      });
}

Status prod_int_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  ET_ASSIGN_OR_RETURN(ReducePlan plan,
                      plan_reduction(ctx, *self, std::span<const int64_t>(&dim, 1), keepdim));
  return product(ctx, *self, plan, *out);
}

Status prod_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, *self, std::nullopt, false));
  return product(ctx, *self, plan, *out);
}

ET_REGISTER_KERNEL("aten::prod.int_out", prod_int_out);
ET_REGISTER_KERNEL("aten::prod.out", prod_out);

}  // namespace
}  // namespace et::kernels
