// quantized_decomposed::choose_qparams.Tensor_out(Tensor input, int quant_min,
//     int quant_max, float eps, ScalarType dtype, *, Tensor(a!) scale_out,
//     Tensor(b!) zero_point_out) -> (Tensor(a!), Tensor(b!))
// Affine per-tensor parameters from the input's range, as eager's determine_qparams
// computes them in float32: lo = min(min, 0), hi = max(max, 0), scale = max((hi - lo) /
// (quant_max - quant_min), eps), zero_point = clamp(quant_min - round(lo / scale),
// quant_min, quant_max). An input with an infinite range gives scale 1 and zero point 0.
// scale_out (float64) and zero_point_out (int64) hold one value each.
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

Status choose_qparams_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(double eps, ctx.double_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t dtype, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(Tensor * scale_out, ctx.output(5));
  ET_ASSIGN_OR_RETURN(Tensor * zero_point_out, ctx.output(6));
  ET_RETURN_IF_ERROR(quantized_dtype(ctx, dtype, qmin, qmax, nullptr).status());
  if (!is_quantizable(input->dtype()) || input->dtype() == ScalarType::kDouble) {
    return ctx.fail(fmt::format("input is {}; it must be float32, float16 or bfloat16",
                                scalar_type_name(input->dtype())));
  }
  if (input->numel() == 0) return ctx.fail("an empty input has no range to quantize");
  if (!is_quantizable(scale_out->dtype()) || zero_point_out->dtype() == ScalarType::kBool ||
      is_quantizable(zero_point_out->dtype())) {
    return ctx.fail("scale_out must be a float tensor and zero_point_out an integer one");
  }
  const Shape one{{1}, 1};
  ET_RETURN_IF_ERROR(resize_output(ctx, *scale_out, one));
  ET_RETURN_IF_ERROR(resize_output(ctx, *zero_point_out, one));
  ET_ASSIGN_OR_RETURN(const float* x, dense_as<float>(ctx, *input));
  float lo = x[0], hi = x[0];
  for (int64_t i = 1; i < input->numel(); ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  double scale = 1.0;
  int64_t zero_point = 0;
  if (std::isfinite(lo) && std::isfinite(hi)) {
    lo = std::min(lo, 0.0f);
    hi = std::max(hi, 0.0f);
    const float s =
        std::max((hi - lo) / static_cast<float>(qmax - qmin), convert_value<float>(eps));
    const float ratio = lo / s;  // NaN only for eps <= 0 with an all-zero input
    const int64_t shift = std::isfinite(ratio) ? static_cast<int64_t>(std::nearbyint(ratio)) : 0;
    zero_point = std::clamp(qmin - shift, qmin, qmax);
    scale = s;
  }
  ET_ASSIGN_OR_RETURN(double* sp, dense_result<double>(ctx, *scale_out));
  ET_ASSIGN_OR_RETURN(int64_t * zp, dense_result<int64_t>(ctx, *zero_point_out));
  sp[0] = scale;
  zp[0] = zero_point;
  ET_RETURN_IF_ERROR(store_dense(ctx, sp, *scale_out));
  return store_dense(ctx, zp, *zero_point_out);
}

ET_REGISTER_KERNEL("quantized_decomposed::choose_qparams.Tensor_out", choose_qparams_tensor_out);

}  // namespace
}  // namespace et::kernels
