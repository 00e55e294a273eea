// quantized_decomposed::quantize_per_tensor.out(Tensor input, float scale, int zero_point,
//     int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)
// quantized_decomposed::quantize_per_tensor.Tensor_out(Tensor input, Tensor scale,
//     Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
// out = clamp(round(input * (1 / scale)) + zero_point, quant_min, quant_max) as dtype,
// in float32 (a float16 or bfloat16 input is widened first; 1 / scale is computed in
// double and rounded to float, as eager multiplies by a Python float). The Tensor
// overload reads one-element scale and zero point tensors.
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

Status quantize(const KernelContext& ctx, const Tensor& input, double scale, int64_t zero_point,
                int64_t qmin, int64_t qmax, int64_t dtype_arg, Tensor& out) {
  ET_RETURN_IF_ERROR(quantized_dtype(ctx, dtype_arg, qmin, qmax, &out).status());
  if (!is_quantizable(input.dtype()) || input.dtype() == ScalarType::kDouble) {
    return ctx.fail(fmt::format("input is {}; it must be float32, float16 or bfloat16",
                                scalar_type_name(input.dtype())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, out, shape_of(input)));
  if (out.numel() == 0) return Status();
  ET_ASSIGN_OR_RETURN(const float* x, dense_as<float>(ctx, input));
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({out.numel()}, sizeof(float)));
  auto* q = static_cast<float*>(scratch);
  const auto inv_scale = convert_value<float>(1.0 / scale);
  const auto zp = static_cast<float>(zero_point);
  for (int64_t i = 0; i < out.numel(); ++i) {
    q[i] = nan_to(quantize_rounded(x[i] * inv_scale, zp, qmin, qmax), qmin);
  }
  return store_dense(ctx, q, out);
}

Status quantize_per_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(double scale, ctx.double_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t zero_point, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t dtype, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(6));
  return quantize(ctx, *input, scale, zero_point, qmin, qmax, dtype, *out);
}

Status quantize_per_tensor_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* scale, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* zero_point, ctx.input(2));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t dtype, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(6));
  ET_ASSIGN_OR_RETURN(double s, single_value<double>(ctx, *scale, "scale"));
  ET_ASSIGN_OR_RETURN(int64_t zp, single_value<int64_t>(ctx, *zero_point, "zero_point"));
  return quantize(ctx, *input, s, zp, qmin, qmax, dtype, *out);
}

ET_REGISTER_KERNEL("quantized_decomposed::quantize_per_tensor.out", quantize_per_tensor_out);
ET_REGISTER_KERNEL("quantized_decomposed::quantize_per_tensor.Tensor_out",
                   quantize_per_tensor_tensor_out);

}  // namespace
}  // namespace et::kernels
