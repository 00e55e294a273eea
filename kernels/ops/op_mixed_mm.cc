// quantized_decomposed::mixed_mm.out(Tensor input, Tensor weight, Tensor weight_scales,
//     Tensor? weight_zero_points, *, Tensor(a!) out) -> Tensor(a!)
// A matrix product with int8 weights scaled per row of the contraction: input [m, k]
// (float32 or float16), weight [k, n] int8, weight_scales [k] of the input's dtype:
// out[i][j] = sum_k input[i][k] * weight[k][j] * weight_scales[k], summed in order in
// the input's type (float16 rounds each step, as ExecuTorch's kernel). Zero points are
// not supported (ExecuTorch's kernel refuses them too).
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

Status mixed_mm_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* scales, ctx.input(2));
  ET_ASSIGN_OR_RETURN(const Tensor* zero_points, ctx.optional_input(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  const ScalarType t = input->dtype();
  if ((t != ScalarType::kFloat && t != ScalarType::kHalf) || input->dim() != 2 ||
      weight->dim() != 2 || weight->dtype() != ScalarType::kChar || scales->dtype() != t ||
      out->dtype() != t || weight->size(0) != input->size(1) || scales->dim() != 1 ||
      scales->size(0) != weight->size(0)) {
    return ctx.fail(fmt::format(
        "input {} {}, weight {} {}, weight_scales {} {}: want float32/float16 input [m, k], "
        "int8 weight [k, n], scales [k] and out of the input's dtype",
        shape_string(input->sizes()), scalar_type_name(t), shape_string(weight->sizes()),
        scalar_type_name(weight->dtype()), shape_string(scales->sizes()),
        scalar_type_name(scales->dtype())));
  }
  if (zero_points != nullptr) return ctx.unsupported("weight_zero_points are not supported");
  const int64_t m = input->size(0), k = input->size(1), n = weight->size(1);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{m, n}, 2}));
  if (out->numel() == 0) return Status();
  ET_ASSIGN_OR_RETURN(const float* x, dense_as<float>(ctx, *input));
  ET_ASSIGN_OR_RETURN(const int8_t* w, dense_as<int8_t>(ctx, *weight));
  ET_ASSIGN_OR_RETURN(const float* s, dense_as<float>(ctx, *scales));
  ET_ASSIGN_OR_RETURN(float* y, dense_result<float>(ctx, *out));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const float prod = round_to(t, round_to(t, x[i * k + p] * w[p * n + j]) * s[p]);
        sum = round_to(t, sum + prod);
      }
      y[i * n + j] = sum;
    }
  }
  return store_dense(ctx, y, *out);
}

ET_REGISTER_KERNEL("quantized_decomposed::mixed_mm.out", mixed_mm_out);

}  // namespace
}  // namespace et::kernels
