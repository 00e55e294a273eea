// quantized_decomposed::dequantize_per_channel.out(Tensor input, Tensor scales,
//     Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *,
//     ScalarType? out_dtype=None, Tensor(a!) out) -> Tensor(a!)
// Along dim `axis`, channel c: out = (input - zero_points[c]) * scales[c] (no zero
// point when None), computed in the scales' float type and stored as out_dtype
// (float32 by default).
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

template <typename C>
Status dequantize_channels(const KernelContext& ctx, const Tensor& input, const Tensor& scales,
                           const Tensor* zero_points, const ChannelLayout& layout, Tensor& out) {
  ET_ASSIGN_OR_RETURN(const int64_t* q, dense_as<int64_t>(ctx, input));
  ET_ASSIGN_OR_RETURN(const C* s, dense_as<C>(ctx, scales));
  ET_ASSIGN_OR_RETURN(const int64_t* zp, optional_dense_as<int64_t>(ctx, zero_points));
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({out.numel()}, sizeof(C)));
  auto* y = static_cast<C*>(scratch);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const int64_t c = layout.channel(i);
    // In double: a zero point far outside the range cannot overflow the subtraction.
    y[i] = static_cast<C>(static_cast<double>(q[i]) -
                          (zp != nullptr ? static_cast<double>(zp[c]) : 0.0)) *
           s[c];
  }
  return store_dense(ctx, y, out);
}

Status dequantize_per_channel_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* scales, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* zero_points, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(int64_t axis, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(int64_t dtype_arg, ctx.int_arg(6));
  ET_ASSIGN_OR_RETURN(std::optional<int64_t> out_dtype, ctx.optional_int_arg(7));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(8));
  ET_ASSIGN_OR_RETURN(ScalarType dtype, quantized_dtype(ctx, dtype_arg, qmin, qmax, nullptr));
  if (input->dtype() != dtype) {
    return ctx.fail(fmt::format("input is {}, the dtype argument says {}",
                                scalar_type_name(input->dtype()), scalar_type_name(dtype)));
  }
  ET_RETURN_IF_ERROR(check_dequantized_out(ctx, out_dtype, *out));
  ET_ASSIGN_OR_RETURN(ChannelLayout layout, channel_layout(ctx, *input, axis, *scales));
  if (zero_points != nullptr && zero_points->numel() != layout.channels) {
    return ctx.fail(
        fmt::format("{} zero points for {} channels", zero_points->numel(), layout.channels));
  }
  if (!is_quantizable(scales->dtype())) return ctx.fail("scales must be a float tensor");
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*input)));
  if (out->numel() == 0) return Status();
  if (scales->dtype() == ScalarType::kDouble) {
    return dequantize_channels<double>(ctx, *input, *scales, zero_points, layout, *out);
  }
  return dequantize_channels<float>(ctx, *input, *scales, zero_points, layout, *out);
}

ET_REGISTER_KERNEL("quantized_decomposed::dequantize_per_channel.out", dequantize_per_channel_out);

}  // namespace
}  // namespace et::kernels
