// aten::_native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight,
//     Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps,
//     *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
// Normalises dim 1 with the running statistics; out1 and out2 (saved statistics, only
// used for training) are left empty, as ExecuTorch's exporter sizes them.
#include <fmt/format.h>

#include <cmath>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status batch_norm_no_training_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.optional_input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* bias, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(const Tensor* mean, ctx.input(3));
  ET_ASSIGN_OR_RETURN(const Tensor* var, ctx.input(4));
  ET_ASSIGN_OR_RETURN(double eps, ctx.double_arg(6));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(7));
  if (input->dim() < 2) return ctx.fail("batch norm needs an input of rank 2 or more");
  if (!is_floating(input->dtype())) return ctx.fail("batch norm needs a floating-point input");
  const int64_t channels = input->size(1);
  for (const Tensor* t : {weight, bias, mean, var}) {
    if (t && t->numel() != channels) {
      return ctx.fail(fmt::format("per-channel parameters must have {} values", channels));
    }
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*input)));
  int64_t inner = 1;
  for (int d = 2; d < input->dim(); ++d) inner *= input->size(d);
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *input));
    ET_ASSIGN_OR_RETURN(const T* m, dense_as<T>(ctx, *mean));
    ET_ASSIGN_OR_RETURN(const T* v, dense_as<T>(ctx, *var));
    ET_ASSIGN_OR_RETURN(const T* w, optional_dense_as<T>(ctx, weight));
    ET_ASSIGN_OR_RETURN(const T* b, optional_dense_as<T>(ctx, bias));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    for (int64_t n = 0; n < input->size(0); ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const T scale = T(1) / std::sqrt(v[c] + static_cast<T>(eps)) * (w ? w[c] : T(1));
        const T shift = (b ? b[c] : T(0)) - m[c] * scale;
        const T* src = x + (n * channels + c) * inner;
        T* dst = y + (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * scale + shift;
      }
    }
    return store_dense<T>(ctx, y, *out);
  };
  return input->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::_native_batch_norm_legit_no_training.out", batch_norm_no_training_out);

}  // namespace
}  // namespace et::kernels
