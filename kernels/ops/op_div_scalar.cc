// aten::div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// aten::div.Scalar_mode_out(Tensor self, Scalar other, *, str? rounding_mode,
//     Tensor(a!) out)
// True division promotes integers to float32; "trunc" and "floor" keep integer types.
#include <fmt/format.h>

#include "kernels/util/scalar_divide.h"
#include "kernels/util/scalar_narrow.h"

namespace et::kernels {
namespace {

Status true_divide(const KernelContext& ctx, const Tensor& self, const Scalar& other, Tensor& out) {
  ET_ASSIGN_OR_RETURN(
      ScalarType common,
      common_dtype(ctx, floating_result(ResultType().add(self).add(other).get()), out));
  if (common == ScalarType::kDouble) {
    const double y = scalar_as<double>(other);
    return map_elementwise<double, double, 1>(ctx, {&self}, out, [y](double x) { return x / y; });
  }
  const float y = scalar_as<float>(other);
  return map_elementwise<float, float, 1>(ctx, {&self}, out, [y](float x) { return x / y; });
}

Status div_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar other, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return true_divide(ctx, *self, other, *out);
}

Status div_scalar_mode_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar other, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(auto mode, ctx.optional_string_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (!mode) return true_divide(ctx, *self, other, *out);
  const bool floor = *mode == "floor";
  if (!floor && *mode != "trunc") {
    return ctx.fail(fmt::format("rounding_mode '{}' is not one of 'trunc', 'floor'", *mode));
  }
  ET_ASSIGN_OR_RETURN(ScalarType common,
                      common_dtype(ctx, ResultType().add(*self).add(other).get(), *out));
  if (common == ScalarType::kBool) return ctx.fail("dividing bool values is not supported");
  bool by_zero = false;
  ET_RETURN_IF_ERROR(dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    if constexpr (std::is_same_v<C, bool>) {
      return Status();  // refused above
    } else {
      C y = scalar_as<C>(other);
      if constexpr (std::is_integral_v<C>) y = narrow_to(common, y);
      return map_elementwise<C, C, 1>(ctx, {self}, *out,
                                      [&](C x) { return rounded_divide(x, y, floor, by_zero); });
    }
  }));
  return by_zero ? ctx.fail("integer division by zero") : Status();
}

ET_REGISTER_KERNEL("aten::div.Scalar_out", div_scalar_out);
ET_REGISTER_KERNEL("aten::div.Scalar_mode_out", div_scalar_mode_out);

}  // namespace
}  // namespace et::kernels
