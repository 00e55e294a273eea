// aten::native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N,
//     SymInt C, SymInt HxW, int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1,
//     Tensor(c!) out2)
// out1, out2: mean and 1/std per (batch, group), shape [N, group].
#include <cmath>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status native_group_norm_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.optional_input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* bias, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(int64_t n, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t c, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t hw, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(int64_t groups, ctx.int_arg(6));
  ET_ASSIGN_OR_RETURN(double eps, ctx.double_arg(7));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(8));
  ET_ASSIGN_OR_RETURN(Tensor * mean_out, ctx.output(9));
  ET_ASSIGN_OR_RETURN(Tensor * rstd_out, ctx.output(10));
  if (!is_floating(input->dtype())) return ctx.fail("group norm needs a floating-point input");
  int64_t described = 0;  // N * C * HxW, without overflow (the values come from the program)
  if (n < 0 || c < 0 || hw < 0 || __builtin_mul_overflow(n, c, &described) ||
      __builtin_mul_overflow(described, hw, &described)) {
    return ctx.fail("N, C and HxW are out of range");
  }
  if (groups <= 0 || c % groups != 0 || described != input->numel() ||
      (input->dim() > 1 && input->size(1) != c)) {
    return ctx.fail("N, C, HxW and group do not describe the input");
  }
  for (const Tensor* t : {weight, bias}) {
    if (t && t->numel() != c) return ctx.fail("weight and bias need one value per channel");
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*input)));
  ET_RETURN_IF_ERROR(resize_output(ctx, *mean_out, Shape{{n, groups}, 2}));
  ET_RETURN_IF_ERROR(resize_output(ctx, *rstd_out, Shape{{n, groups}, 2}));
  const int64_t per_group = c / groups * hw;
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *input));
    ET_ASSIGN_OR_RETURN(const T* w, optional_dense_as<T>(ctx, weight));
    ET_ASSIGN_OR_RETURN(const T* b, optional_dense_as<T>(ctx, bias));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    ET_ASSIGN_OR_RETURN(T * means, dense_result<T>(ctx, *mean_out));
    ET_ASSIGN_OR_RETURN(T * rstds, dense_result<T>(ctx, *rstd_out));
    for (int64_t g = 0; g < n * groups; ++g) {
      const T* src = x + g * per_group;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < per_group; ++i) sum += src[i];
      const double mean = sum / static_cast<double>(per_group);
      for (int64_t i = 0; i < per_group; ++i) sq += (src[i] - mean) * (src[i] - mean);
      const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(per_group) + eps);
      means[g] = static_cast<T>(mean);
      rstds[g] = static_cast<T>(rstd);
      for (int64_t i = 0; i < per_group; ++i) {
        const int64_t channel = (g % groups) * (c / groups) + i / hw;
        const T v = static_cast<T>((src[i] - mean) * rstd);
        y[g * per_group + i] = v * (w ? w[channel] : T(1)) + (b ? b[channel] : T(0));
      }
    }
    ET_RETURN_IF_ERROR(store_dense<T>(ctx, means, *mean_out));
    ET_RETURN_IF_ERROR(store_dense<T>(ctx, rstds, *rstd_out));
    return store_dense<T>(ctx, y, *out);
  };
  return input->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::native_group_norm.out", native_group_norm_out);

}  // namespace
}  // namespace et::kernels
