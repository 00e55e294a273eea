// aten::_native_batch_norm_legit.no_stats_out(Tensor input, Tensor? weight,
//     Tensor? bias, bool training, float momentum, float eps, *, Tensor(a!) out,
//     Tensor(b!) save_mean, Tensor(c!) save_invstd)
// Normalises dim 1 with the statistics of the input itself (what instance norm
// exports to); save_mean and save_invstd get them, one value per channel.
#include <cmath>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status batch_norm_no_stats_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.optional_input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* bias, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(double eps, ctx.double_arg(5));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(6));
  ET_ASSIGN_OR_RETURN(Tensor * mean_out, ctx.output(7));
  ET_ASSIGN_OR_RETURN(Tensor * invstd_out, ctx.output(8));
  if (input->dim() < 2 || !is_floating(input->dtype()))
    return ctx.fail("needs a floating-point input of rank 2+");
  const int64_t n = input->size(0), c = input->size(1);
  int64_t inner = 1;
  for (int d = 2; d < input->dim(); ++d) inner *= input->size(d);
  for (const Tensor* t : {weight, bias}) {
    if (t && t->numel() != c) return ctx.fail("weight and bias need one value per channel");
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*input)));
  ET_RETURN_IF_ERROR(resize_output(ctx, *mean_out, Shape{{c}, 1}));
  ET_RETURN_IF_ERROR(resize_output(ctx, *invstd_out, Shape{{c}, 1}));
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *input));
    ET_ASSIGN_OR_RETURN(const T* w, optional_dense_as<T>(ctx, weight));
    ET_ASSIGN_OR_RETURN(const T* b, optional_dense_as<T>(ctx, bias));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    ET_ASSIGN_OR_RETURN(T * means, dense_result<T>(ctx, *mean_out));
    ET_ASSIGN_OR_RETURN(T * invstds, dense_result<T>(ctx, *invstd_out));
    const double count = static_cast<double>(n * inner);
    for (int64_t ch = 0; ch < c; ++ch) {
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < n; ++i) {
        const T* src = x + (i * c + ch) * inner;
        for (int64_t k = 0; k < inner; ++k) sum += src[k];
      }
      const double mean = sum / count;
      for (int64_t i = 0; i < n; ++i) {
        const T* src = x + (i * c + ch) * inner;
        for (int64_t k = 0; k < inner; ++k) sq += (src[k] - mean) * (src[k] - mean);
      }
      const double invstd = 1.0 / std::sqrt(sq / count + eps);
      means[ch] = static_cast<T>(mean);
      invstds[ch] = static_cast<T>(invstd);
      const T scale = static_cast<T>(invstd) * (w ? w[ch] : T(1));
      const T shift = (b ? b[ch] : T(0)) - static_cast<T>(mean) * scale;
      for (int64_t i = 0; i < n; ++i) {
        const T* src = x + (i * c + ch) * inner;
        T* dst = y + (i * c + ch) * inner;
        for (int64_t k = 0; k < inner; ++k) dst[k] = src[k] * scale + shift;
      }
    }
    ET_RETURN_IF_ERROR(store_dense<T>(ctx, means, *mean_out));
    ET_RETURN_IF_ERROR(store_dense<T>(ctx, invstds, *invstd_out));
    return store_dense<T>(ctx, y, *out);
  };
  return input->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::_native_batch_norm_legit.no_stats_out", batch_norm_no_stats_out);

}  // namespace
}  // namespace et::kernels
