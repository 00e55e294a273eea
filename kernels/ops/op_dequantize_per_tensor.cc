// quantized_decomposed::dequantize_per_tensor.out(Tensor input, float scale, int zero_point,
//     int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None,
//     Tensor(a!) out) -> Tensor(a!)
// quantized_decomposed::dequantize_per_tensor.Tensor_out(Tensor input, Tensor scale,
//     Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *,
//     ScalarType? out_dtype=None, Tensor(a!) out) -> Tensor(a!)
// out = (input - zero_point) * scale in out_dtype (float32 by default): float32 math for
// float32 (and float16/bfloat16, rounded once at the end), float64 for float64. The
// input must be of `dtype`; quant_min/quant_max are checked against it, not applied.
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

template <typename C>
Status dequantize_as(const KernelContext& ctx, const Tensor& input, double scale,
                     int64_t zero_point, Tensor& out) {
  ET_ASSIGN_OR_RETURN(const C* q, dense_as<C>(ctx, input));
  ET_ASSIGN_OR_RETURN(C * y, dense_result<C>(ctx, out));
  const auto s = static_cast<C>(scale);
  const auto zp = static_cast<C>(zero_point);
  for (int64_t i = 0; i < out.numel(); ++i) y[i] = (q[i] - zp) * s;
  return store_dense(ctx, y, out);
}

Status dequantize(const KernelContext& ctx, const Tensor& input, double scale, int64_t zero_point,
                  int64_t qmin, int64_t qmax, int64_t dtype_arg, std::optional<int64_t> out_dtype,
                  Tensor& out) {
  ET_ASSIGN_OR_RETURN(ScalarType dtype, quantized_dtype(ctx, dtype_arg, qmin, qmax, nullptr));
  if (input.dtype() != dtype) {
    return ctx.fail(fmt::format("input is {}, the dtype argument says {}",
                                scalar_type_name(input.dtype()), scalar_type_name(dtype)));
  }
  ET_RETURN_IF_ERROR(check_dequantized_out(ctx, out_dtype, out));
  ET_RETURN_IF_ERROR(resize_output(ctx, out, shape_of(input)));
  if (out.numel() == 0) return Status();
  if (out.dtype() == ScalarType::kDouble) {
    return dequantize_as<double>(ctx, input, scale, zero_point, out);
  }
  return dequantize_as<float>(ctx, input, scale, zero_point, out);
}

Status dequantize_per_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(double scale, ctx.double_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t zero_point, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t dtype, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(std::optional<int64_t> out_dtype, ctx.optional_int_arg(6));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(7));
  return dequantize(ctx, *input, scale, zero_point, qmin, qmax, dtype, out_dtype, *out);
}

Status dequantize_per_tensor_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* scale, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* zero_point, ctx.input(2));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t dtype, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(std::optional<int64_t> out_dtype, ctx.optional_int_arg(6));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(7));
  ET_ASSIGN_OR_RETURN(double s, single_value<double>(ctx, *scale, "scale"));
  ET_ASSIGN_OR_RETURN(int64_t zp, single_value<int64_t>(ctx, *zero_point, "zero_point"));
  return dequantize(ctx, *input, s, zp, qmin, qmax, dtype, out_dtype, *out);
}

ET_REGISTER_KERNEL("quantized_decomposed::dequantize_per_tensor.out", dequantize_per_tensor_out);
ET_REGISTER_KERNEL("quantized_decomposed::dequantize_per_tensor.Tensor_out",
                   dequantize_per_tensor_tensor_out);

}  // namespace
}  // namespace et::kernels
