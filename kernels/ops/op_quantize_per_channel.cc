// quantized_decomposed::quantize_per_channel.out(Tensor input, Tensor scales,
//     Tensor zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *,
//     Tensor(a!) out) -> Tensor(a!)
// Along dim `axis`, channel c: out = clamp(round(input * (1 / scales[c])) +
// zero_points[c], quant_min, quant_max) as dtype. In float32, or float64 when the
// scales are (eager promotes the product); float16/bfloat16 inputs are widened first.
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

template <typename C>
Status quantize_channels(const KernelContext& ctx, const Tensor& input, const Tensor& scales,
                         const Tensor& zero_points, const ChannelLayout& layout, int64_t qmin,
                         int64_t qmax, Tensor& out) {
  ET_ASSIGN_OR_RETURN(const C* x, dense_as<C>(ctx, input));
  ET_ASSIGN_OR_RETURN(const C* s, dense_as<C>(ctx, scales));
  ET_ASSIGN_OR_RETURN(const int64_t* zp, dense_as<int64_t>(ctx, zero_points));
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({out.numel()}, sizeof(C)));
  auto* q = static_cast<C*>(scratch);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const int64_t c = layout.channel(i);
    const C inv = C{1} / s[c];
    q[i] = nan_to(quantize_rounded(x[i] * inv, static_cast<C>(zp[c]), qmin, qmax), qmin);
  }
  return store_dense(ctx, q, out);
}

Status quantize_per_channel_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* scales, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* zero_points, ctx.input(2));
  ET_ASSIGN_OR_RETURN(int64_t axis, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(int64_t dtype, ctx.int_arg(6));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(7));
  ET_RETURN_IF_ERROR(quantized_dtype(ctx, dtype, qmin, qmax, out).status());
  if (!is_quantizable(input->dtype()) || input->dtype() == ScalarType::kDouble) {
    return ctx.fail(fmt::format("input is {}; it must be float32, float16 or bfloat16",
                                scalar_type_name(input->dtype())));
  }
  ET_ASSIGN_OR_RETURN(ChannelLayout layout, channel_layout(ctx, *input, axis, *scales));
  if (zero_points->numel() != layout.channels) {
    return ctx.fail(
        fmt::format("{} zero points for {} channels", zero_points->numel(), layout.channels));
  }
  if (!is_quantizable(scales->dtype())) return ctx.fail("scales must be a float tensor");
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*input)));
  if (out->numel() == 0) return Status();
  if (scales->dtype() == ScalarType::kDouble) {
    return quantize_channels<double>(ctx, *input, *scales, *zero_points, layout, qmin, qmax, *out);
  }
  return quantize_channels<float>(ctx, *input, *scales, *zero_points, layout, qmin, qmax, *out);
}

ET_REGISTER_KERNEL("quantized_decomposed::quantize_per_channel.out", quantize_per_channel_out);

}  // namespace
}  // namespace et::kernels
