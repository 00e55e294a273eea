// aten::_native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias,
//     Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum,
//     float eps, *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd)
// Normalises dim 1. training: with the batch's own statistics (save_mean and
// save_invstd get them, one value per channel) and, as PyTorch does, updates the
// running statistics in place: running = momentum * batch + (1 - momentum) * running,
// the variance unbiased (n / (n - 1)). Not training: with the running statistics, and
// save_mean and save_invstd are left empty, as PyTorch returns them.
// Statistics are accumulated in double; the running tensors keep their own dtype.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status batch_norm_legit_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.optional_input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* bias, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(bool training, ctx.bool_arg(5));
  ET_ASSIGN_OR_RETURN(double momentum, ctx.double_arg(6));
  ET_ASSIGN_OR_RETURN(double eps, ctx.double_arg(7));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(8));
  ET_ASSIGN_OR_RETURN(Tensor * mean_out, ctx.output(9));
  ET_ASSIGN_OR_RETURN(Tensor * invstd_out, ctx.output(10));
  // Training writes the running statistics, so they must not be program constants.
  const Tensor* running_mean;
  const Tensor* running_var;
  Tensor* mutable_mean = nullptr;
  Tensor* mutable_var = nullptr;
  if (training) {
    ET_ASSIGN_OR_RETURN(mutable_mean, ctx.output(3));
    ET_ASSIGN_OR_RETURN(mutable_var, ctx.output(4));
    running_mean = mutable_mean;
    running_var = mutable_var;
  } else {
    ET_ASSIGN_OR_RETURN(running_mean, ctx.input(3));
    ET_ASSIGN_OR_RETURN(running_var, ctx.input(4));
  }
  if (input->dim() < 2 || !is_floating(input->dtype()))
    return ctx.fail("batch norm needs a floating-point input of rank 2 or more");
  const int64_t n = input->size(0), c = input->size(1);
  int64_t inner = 1;
  for (int d = 2; d < input->dim(); ++d) inner *= input->size(d);
  for (const Tensor* t : {weight, bias, running_mean, running_var}) {
    if (t && t->numel() != c)
      return ctx.fail(fmt::format("per-channel tensors must have {} values", c));
    if (t && !is_floating(t->dtype()))
      return ctx.fail("per-channel tensors must be floating-point");
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*input)));
  const int64_t saved = training ? c : 0;
  ET_RETURN_IF_ERROR(resize_output(ctx, *mean_out, Shape{{saved}, 1}));
  ET_RETURN_IF_ERROR(resize_output(ctx, *invstd_out, Shape{{saved}, 1}));
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *input));
    ET_ASSIGN_OR_RETURN(const T* w, optional_dense_as<T>(ctx, weight));
    ET_ASSIGN_OR_RETURN(const T* b, optional_dense_as<T>(ctx, bias));
    ET_ASSIGN_OR_RETURN(const double* rm, dense_as<double>(ctx, *running_mean));
    ET_ASSIGN_OR_RETURN(const double* rv, dense_as<double>(ctx, *running_var));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    ET_ASSIGN_OR_RETURN(void* stats,
                        ctx.temp_product({4, std::max<int64_t>(c, 1)}, sizeof(double)));
    double* mean = static_cast<double*>(stats);
    double* invstd = mean + c;
    double* new_mean = invstd + c;
    double* new_var = new_mean + c;
    const double count = static_cast<double>(n * inner);
    for (int64_t ch = 0; ch < c; ++ch) {
      if (training) {
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T* src = x + (i * c + ch) * inner;
          for (int64_t k = 0; k < inner; ++k) sum += src[k];
        }
        const double m = sum / count;
        for (int64_t i = 0; i < n; ++i) {
          const T* src = x + (i * c + ch) * inner;
          for (int64_t k = 0; k < inner; ++k) sq += (src[k] - m) * (src[k] - m);
        }
        mean[ch] = m;
        invstd[ch] = 1.0 / std::sqrt(sq / count + eps);
        new_mean[ch] = momentum * m + (1 - momentum) * rm[ch];
        new_var[ch] = momentum * (sq / (count - 1)) + (1 - momentum) * rv[ch];
      } else {
        mean[ch] = rm[ch];
        invstd[ch] = 1.0 / std::sqrt(rv[ch] + eps);
      }
      const T scale = convert_value<T>(invstd[ch]) * (w ? w[ch] : T(1));
      const T shift = (b ? b[ch] : T(0)) - convert_value<T>(mean[ch]) * scale;
      for (int64_t i = 0; i < n; ++i) {
        const T* src = x + (i * c + ch) * inner;
        T* dst = y + (i * c + ch) * inner;
        for (int64_t k = 0; k < inner; ++k) dst[k] = src[k] * scale + shift;
      }
    }
    if (training) {
      ET_RETURN_IF_ERROR(store_dense<double>(ctx, mean, *mean_out));
      ET_RETURN_IF_ERROR(store_dense<double>(ctx, invstd, *invstd_out));
      ET_RETURN_IF_ERROR(store_dense<double>(ctx, new_mean, *mutable_mean));
      ET_RETURN_IF_ERROR(store_dense<double>(ctx, new_var, *mutable_var));
    }
    return store_dense<T>(ctx, y, *out);
  };
  return input->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::_native_batch_norm_legit.out", batch_norm_legit_out);

}  // namespace
}  // namespace et::kernels
