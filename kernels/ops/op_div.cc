// aten::div.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out)
// True division promotes integers to float32. "trunc" and "floor" keep integer types
// (dividing an integer by zero is an error, as in PyTorch).
#include <fmt/format.h>

#include "kernels/util/binary_op.h"
#include "kernels/util/float_math.h"

namespace et::kernels {
namespace {

Status true_divide(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  ET_ASSIGN_OR_RETURN(ScalarType common,
                      common_dtype(ctx, floating_result(ResultType().add(a).add(b).get()), out));
  if (common == ScalarType::kDouble) {
    return map_elementwise<double, double, 2>(ctx, {&a, &b}, out,
                                              [](double x, double y) { return x / y; });
  }
  return map_elementwise<float, float, 2>(ctx, {&a, &b}, out,
                                          [](float x, float y) { return x / y; });
}

Status div_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return true_divide(ctx, *self, *other, *out);
}

Status div_out_mode(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(auto mode, ctx.optional_string_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (!mode) return true_divide(ctx, *self, *other, *out);
  const bool floor = *mode == "floor";
  if (!floor && *mode != "trunc") {
    return ctx.fail(fmt::format("rounding_mode '{}' is not one of 'trunc', 'floor'", *mode));
  }
  ET_ASSIGN_OR_RETURN(ScalarType common,
                      common_dtype(ctx, ResultType().add(*self).add(*other).get(), *out));
  if (common == ScalarType::kBool) return ctx.fail("dividing bool tensors is not supported");
  bool divided_by_zero = false;
  Status s = dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    return map_elementwise<C, C, 2>(ctx, {self, other}, *out, [&](C x, C y) -> C {
      if constexpr (std::is_floating_point_v<C>) {
        return floor ? floor_divide_float(x, y) : std::trunc(x / y);
      } else if constexpr (std::is_same_v<C, bool>) {
        return x;
      } else {
        if (y == 0) {
          divided_by_zero = true;
          return 0;
        }
        if (y == -1) return static_cast<C>(0ull - static_cast<uint64_t>(x));  // no overflow trap
        return floor ? floor_divide_int(x, y) : x / y;
      }
    });
  });
  ET_RETURN_IF_ERROR(s);
  if (divided_by_zero) return ctx.fail("integer division by zero");
  return Status();
}

ET_REGISTER_KERNEL("aten::div.out", div_out);
ET_REGISTER_KERNEL("aten::div.out_mode", div_out_mode);

}  // namespace
}  // namespace et::kernels
