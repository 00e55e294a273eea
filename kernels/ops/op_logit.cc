// aten::logit.out(Tensor self, float? eps=None, *, Tensor(a!) out)
// log(z / (1 - z)) with z = x clamped to [eps, 1 - eps]; no clamp when eps is None or
// negative (PyTorch's rule). NaN stays NaN. Integers compute in float32.
#include <cmath>

#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status logit_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto eps, ctx.optional_double_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  const ScalarType result = floating_result(self->dtype());
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, result, *out));
  const bool clamp = eps.has_value() && *eps >= 0;
  // eps is first rounded to the input's floating dtype, as PyTorch converts it.
  double lo = 0;
  if (clamp) {
    visit_dtype(common, [&](auto zero) {
      lo = convert_value<double>(convert_value<decltype(zero)>(*eps));
    });
  }
  const auto logit = [clamp](auto x, auto low) {
    using C = decltype(x);
    if (clamp) {
      const C high = C(1) - low;
      x = x < low ? low : (x > high ? high : x);
    }
    return std::log(x / (C(1) - x));
  };
  if (common == ScalarType::kDouble) {
    return map_elementwise<double, double, 1>(ctx, {self}, *out,
                                              [&](double x) { return logit(x, lo); });
  }
  const float lo_f = static_cast<float>(lo);
  return map_elementwise<float, float, 1>(ctx, {self}, *out,
                                          [&](float x) { return logit(x, lo_f); });
}

ET_REGISTER_KERNEL("aten::logit.out", logit_out);

}  // namespace
}  // namespace et::kernels
