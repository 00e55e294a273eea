// aten::pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out)
// aten::pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out)
// aten::pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out)
// Integers raise by repeated squaring (wrapping); a negative integer exponent is an
// error unless the base is 1 or -1, as in PyTorch.
#include <cmath>

#include "kernels/util/binary_op.h"
#include "kernels/util/integer_math.h"

namespace et::kernels {
namespace {

auto pow_fn(bool& negative_exponent) {
  return [&negative_exponent](auto base, auto exp) {
    using C = decltype(base);
    if constexpr (std::is_same_v<C, bool>) {
      return static_cast<C>(base || !exp);
    } else if constexpr (std::is_integral_v<C>) {
      if (exp < 0) {
        if (base == 1) return C(1);
        if (base == -1) return (exp % 2 == 0) ? C(1) : C(-1);
        negative_exponent = true;
        return C(0);
      }
      C result = 1;
      while (exp > 0) {
        if (exp & 1) result = wrapping_mul(result, base);
        base = wrapping_mul(base, base);
        exp >>= 1;
      }
      return result;
    } else {
      return std::pow(base, exp);
    }
  };
}

Status finish(const KernelContext& ctx, Status s, bool negative_exponent) {
  ET_RETURN_IF_ERROR(s);
  if (negative_exponent) return ctx.fail("integers cannot be raised to negative integer powers");
  return Status();
}

Status pow_tensor_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* exponent, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  bool neg = false;
  return finish(ctx, binary_arith(ctx, *self, *exponent, *out, pow_fn(neg)), neg);
}

Status pow_tensor_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar exponent, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  bool neg = false;
  return finish(ctx, binary_arith_scalar(ctx, *self, exponent, *out, pow_fn(neg)), neg);
}

Status pow_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(Scalar base, ctx.scalar_arg(0));
  ET_ASSIGN_OR_RETURN(const Tensor* exponent, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  ET_ASSIGN_OR_RETURN(ScalarType common,
                      common_dtype(ctx, ResultType().add(*exponent).add(base).get(), *out));
  bool neg = false;
  auto fn = pow_fn(neg);
  Status s = dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    const C b = scalar_as<C>(base);
    return map_elementwise<C, C, 1>(ctx, {exponent}, *out,
                                    [&](C e) { return static_cast<C>(fn(b, e)); });
  });
  return finish(ctx, s, neg);
}

ET_REGISTER_KERNEL("aten::pow.Tensor_Tensor_out", pow_tensor_tensor_out);
ET_REGISTER_KERNEL("aten::pow.Tensor_Scalar_out", pow_tensor_scalar_out);
ET_REGISTER_KERNEL("aten::pow.Scalar_out", pow_scalar_out);

}  // namespace
}  // namespace et::kernels
