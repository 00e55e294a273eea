// quantized_decomposed::dequantize_per_token.out(Tensor input, Tensor scales,
//     Tensor zero_points, int quant_min, int quant_max, ScalarType dtype,
//     ScalarType output_dtype, *, Tensor(a!) out) -> Tensor(a!)
// Each row (the last dim) r: out = (input - zero_points[r]) * scales[r], computed in
// float32 (float64 when the scales or zero points are) and stored as output_dtype.
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

template <typename C>
Status dequantize_rows(const KernelContext& ctx, const Tensor& input, const Tensor& scales,
                       const Tensor& zero_points, Tensor& out) {
  ET_ASSIGN_OR_RETURN(const C* q, dense_as<C>(ctx, input));
  ET_ASSIGN_OR_RETURN(const C* s, dense_as<C>(ctx, scales));
  ET_ASSIGN_OR_RETURN(const C* zp, dense_as<C>(ctx, zero_points));
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({out.numel()}, sizeof(C)));
  auto* y = static_cast<C*>(scratch);
  const int64_t row = input.dim() == 0 ? 1 : input.size(input.dim() - 1);
  for (int64_t i = 0; i < out.numel(); ++i) y[i] = (q[i] - zp[i / row]) * s[i / row];
  return store_dense(ctx, y, out);
}

Status dequantize_per_token_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* scales, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* zero_points, ctx.input(2));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t dtype_arg, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(int64_t output_dtype, ctx.int_arg(6));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(7));
  ET_ASSIGN_OR_RETURN(ScalarType dtype, quantized_dtype(ctx, dtype_arg, qmin, qmax, nullptr));
  if (input->dtype() != dtype) {
    return ctx.fail(fmt::format("input is {}, the dtype argument says {}",
                                scalar_type_name(input->dtype()), scalar_type_name(dtype)));
  }
  ET_RETURN_IF_ERROR(check_dequantized_out(ctx, output_dtype, *out));
  if (!is_quantizable(scales->dtype())) return ctx.fail("scales must be a float tensor");
  ET_RETURN_IF_ERROR(check_per_row(ctx, *input, *scales, "scales"));
  ET_RETURN_IF_ERROR(check_per_row(ctx, *input, *zero_points, "zero_points"));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*input)));
  if (out->numel() == 0) return Status();
  if (scales->dtype() == ScalarType::kDouble || zero_points->dtype() == ScalarType::kDouble) {
    return dequantize_rows<double>(ctx, *input, *scales, *zero_points, *out);
  }
  return dequantize_rows<float>(ctx, *input, *scales, *zero_points, *out);
}

ET_REGISTER_KERNEL("quantized_decomposed::dequantize_per_token.out", dequantize_per_token_out);

}  // namespace
}  // namespace et::kernels
