// quantized_decomposed::mixed_linear.out(Tensor input, Tensor weight,
//     Tensor weight_scales, Tensor? weight_zero_points, ScalarType? dtype=None, *,
//     Tensor(a!) out) -> Tensor(a!)
// A linear layer with int8 weights: input [m, k] (float32 or float16), weight [n, k]
// int8, weight_scales [n] or [n, groups] of the input's dtype (group size ceil(k /
// groups)): out[i][j] = sum over groups g of (sum_{k in g} input[i][k] * weight[j][k])
// * scale[j][g], accumulated in out's dtype (`dtype` when given: float32 or float16),
// in order, as ExecuTorch's kernel. Zero points are not supported (nor by ExecuTorch).
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

Status mixed_linear_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* scales, ctx.input(2));
  ET_ASSIGN_OR_RETURN(const Tensor* zero_points, ctx.optional_input(3));
  ET_ASSIGN_OR_RETURN(std::optional<int64_t> dtype, ctx.optional_int_arg(4));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(5));
  const ScalarType t = input->dtype(), ot = out->dtype();
  if ((t != ScalarType::kFloat && t != ScalarType::kHalf) || input->dim() != 2 ||
      weight->dim() != 2 || weight->dtype() != ScalarType::kChar || scales->dtype() != t ||
      weight->size(1) != input->size(1) || (scales->dim() != 1 && scales->dim() != 2) ||
      scales->size(0) != weight->size(0)) {
    return ctx.fail(fmt::format(
        "input {} {}, weight {} {}, weight_scales {} {}: want float32/float16 input [m, k], "
        "int8 weight [n, k] and scales [n] or [n, groups] of the input's dtype",
        shape_string(input->sizes()), scalar_type_name(t), shape_string(weight->sizes()),
        scalar_type_name(weight->dtype()), shape_string(scales->sizes()),
        scalar_type_name(scales->dtype())));
  }
  if ((ot != ScalarType::kFloat && ot != ScalarType::kHalf && ot != ScalarType::kDouble) ||
      (dtype && *dtype != static_cast<int64_t>(ot))) {
    return ctx.fail(fmt::format("out is {}; it must be float32, float16 or float64, as dtype says",
                                scalar_type_name(ot)));
  }
  if (zero_points != nullptr) return ctx.unsupported("weight_zero_points are not supported");
  const int64_t m = input->size(0), k = input->size(1), n = weight->size(0);
  const int64_t groups = scales->dim() == 2 ? scales->size(1) : 1;
  const int64_t group = groups == 0 ? k : (k + groups - 1) / groups;
  if (groups == 0 || (k > 0 && (k + group - 1) / group != groups)) {
    return ctx.fail(fmt::format("{} scale groups do not fit {} inputs", groups, k));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{m, n}, 2}));
  if (out->numel() == 0) return Status();
  ET_ASSIGN_OR_RETURN(const double* x, dense_as<double>(ctx, *input));
  ET_ASSIGN_OR_RETURN(const int8_t* w, dense_as<int8_t>(ctx, *weight));
  ET_ASSIGN_OR_RETURN(const double* s, dense_as<double>(ctx, *scales));
  ET_ASSIGN_OR_RETURN(double* y, dense_result<double>(ctx, *out));
  // Each step rounds to out's type (float64 rounds nothing); products to the input's.
  auto in_t = [t](double v) { return static_cast<double>(round_to(t, static_cast<float>(v))); };
  auto out_t = [ot](double v) {
    return ot == ScalarType::kDouble ? v : static_cast<double>(round_to(ot, static_cast<float>(v)));
  };
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t k0 = 0; k0 < k; k0 += group) {
        double partial = 0;
        for (int64_t p = k0; p < std::min(k, k0 + group); ++p) {
          partial = out_t(partial + in_t(x[i * k + p] * w[j * k + p]));
        }
        sum = out_t(sum + out_t(partial * s[j * groups + k0 / group]));
      }
      y[i * n + j] = sum;
    }
  }
  return store_dense(ctx, y, *out);
}

ET_REGISTER_KERNEL("quantized_decomposed::mixed_linear.out", mixed_linear_out);

}  // namespace
}  // namespace et::kernels
