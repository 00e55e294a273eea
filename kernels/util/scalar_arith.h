// The Scalar overloads of add, sub and rsub: out = x + alpha * s, x - alpha * s or
// s - alpha * x, with the Scalar s taking part in type promotion as a number (as
// PyTorch wraps it). Each op's file registers its form.
#pragma once

#include "kernels/util/binary_op.h"
#include "kernels/util/integer_math.h"

namespace et::kernels {

enum class ScalarArith { kAdd, kSub, kRsub };

// aten::{add,sub,rsub}.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *,
//     Tensor(a!) out)
template <ScalarArith kOp>
Status scalar_arith_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar other, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Scalar alpha, ctx.scalar_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (kOp != ScalarArith::kAdd &&
      (self->dtype() == ScalarType::kBool || other.kind == ValueKind::kBool)) {
    return ctx.fail("subtracting bool values is not supported (as in PyTorch)");
  }
  if (alpha.is_floating() && !is_floating(ResultType().add(*self).add(other).get())) {
    return ctx.fail("a float alpha needs a floating-point result");
  }
  const double a = alpha.to_double();
  const int64_t ai = alpha.to_int();
  return binary_arith_scalar(ctx, *self, other, *out, [&](auto x, auto s) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) {
      if constexpr (kOp == ScalarArith::kAdd) return x + static_cast<C>(a) * s;
      if constexpr (kOp == ScalarArith::kSub) return x - static_cast<C>(a) * s;
      if constexpr (kOp == ScalarArith::kRsub) return s - static_cast<C>(a) * x;
    } else {
      // bool only reaches kAdd: wrapping_mul is `and`, the sum is then read as `or`.
      const C alpha_c = static_cast<C>(ai);
      if constexpr (kOp == ScalarArith::kAdd) return wrapping_add(x, wrapping_mul(alpha_c, s));
      if constexpr (kOp == ScalarArith::kSub) return wrapping_sub(x, wrapping_mul(alpha_c, s));
      if constexpr (kOp == ScalarArith::kRsub) return wrapping_sub(s, wrapping_mul(alpha_c, x));
    }
  });
}

}  // namespace et::kernels
