// quantized_decomposed::quantize_per_token.out(Tensor input, Tensor scales,
//     Tensor zero_points, int quant_min, int quant_max, ScalarType dtype, *,
//     Tensor(a!) out) -> Tensor(a!)
// Each row (the last dim) r: out = clamp(round(input * (1 / scales[r]) +
// zero_points[r]), quant_min, quant_max) as dtype: the zero point is added before
// rounding, as eager does. float32 math, float64 when the scales or zero points are
// float64 (eager's promotion; the int8 KV cache of ExecuTorch's LLM flow passes
// float64 scales).
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

template <typename C>
Status quantize_rows(const KernelContext& ctx, const Tensor& input, const Tensor& scales,
                     const Tensor& zero_points, int64_t qmin, int64_t qmax, Tensor& out) {
  ET_ASSIGN_OR_RETURN(const C* x, dense_as<C>(ctx, input));
  ET_ASSIGN_OR_RETURN(const C* s, dense_as<C>(ctx, scales));
  ET_ASSIGN_OR_RETURN(const C* zp, dense_as<C>(ctx, zero_points));
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({out.numel()}, sizeof(C)));
  auto* q = static_cast<C*>(scratch);
  const int64_t row = input.dim() == 0 ? 1 : input.size(input.dim() - 1);
  const C lo = static_cast<C>(qmin), hi = static_cast<C>(qmax);
  const bool small = rounds_small<C>(qmin, qmax);
  for (int64_t r = 0; r < out.numel() / row; ++r) {
    const C inv = C{1} / s[r];
    const C z = zp[r];
    const C* xr = x + r * row;
    C* qr = q + r * row;
    if (small) {
      // Clamped first, then rounded: the same, as the bounds are integers (NaN stays).
      for (int64_t i = 0; i < row; ++i) {
        const C v = xr[i] * inv + z;
        qr[i] = nan_to(round_small(v < lo ? lo : (v > hi ? hi : v)), qmin);
      }
    } else {
      for (int64_t i = 0; i < row; ++i) {
        const C v = static_cast<C>(std::nearbyint(xr[i] * inv + z));
        qr[i] = nan_to(std::min(std::max(v, lo), hi), qmin);
      }
    }
  }
  return store_dense(ctx, q, out);
}

Status quantize_per_token_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* scales, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* zero_points, ctx.input(2));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t dtype, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(6));
  ET_RETURN_IF_ERROR(quantized_dtype(ctx, dtype, qmin, qmax, out).status());
  if (!is_quantizable(input->dtype())) {
    return ctx.fail(
        fmt::format("input is {}; it must be a float tensor", scalar_type_name(input->dtype())));
  }
  if (!is_quantizable(scales->dtype())) return ctx.fail("scales must be a float tensor");
  ET_RETURN_IF_ERROR(check_per_row(ctx, *input, *scales, "scales"));
  ET_RETURN_IF_ERROR(check_per_row(ctx, *input, *zero_points, "zero_points"));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*input)));
  if (out->numel() == 0) return Status();
  if (input->dtype() == ScalarType::kDouble || scales->dtype() == ScalarType::kDouble ||
      zero_points->dtype() == ScalarType::kDouble) {
    return quantize_rows<double>(ctx, *input, *scales, *zero_points, qmin, qmax, *out);
  }
  return quantize_rows<float>(ctx, *input, *scales, *zero_points, qmin, qmax, *out);
}

ET_REGISTER_KERNEL("quantized_decomposed::quantize_per_token.out", quantize_per_token_out);

}  // namespace
}  // namespace et::kernels
