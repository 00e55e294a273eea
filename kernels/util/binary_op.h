// Elementwise binary ops in PyTorch's semantics: broadcasting, type promotion of the
// operands (result_type), computation in the promoted type (float for the half
// types), and a cast to the output's dtype when PyTorch allows it.
#pragma once

#include <fmt/format.h>

#include "kernels/util/convert.h"
#include "kernels/util/elementwise.h"
#include "kernels/util/scalar_narrow.h"
#include "kernels/util/type_promotion.h"

namespace et::kernels {

// The dtype an op computes in, checked against the output. InvalidArgument when the
// output cannot hold it (e.g. a float result into an int64 output).
inline Result<ScalarType> common_dtype(const KernelContext& ctx, ScalarType common,
                                       const Tensor& out) {
  if (!can_cast(common, out.dtype())) {
    return ctx.fail(fmt::format("result type {} cannot be written to an output of {}",
                                scalar_type_name(common), scalar_type_name(out.dtype())));
  }
  return common;
}

// out = op(a, b), op called with two values of the compute type and returning one.
template <typename Op>
Status binary_arith(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out,
                    Op&& op) {
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, ResultType().add(a).add(b).get(), out));
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    return map_elementwise<C, C, 2>(ctx, {&a, &b}, out,
                                    [&](C x, C y) { return static_cast<C>(op(x, y)); });
  });
}

// A Scalar as the compute type C of an op whose operands promote to `common`. An
// integer scalar against an integer dtype is first wrapped to that dtype, as PyTorch
// wraps numbers (300 against int8 is 44).
template <typename C>
C scalar_in(const Scalar& s, ScalarType common) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    if (!s.is_floating()) return static_cast<C>(narrow_to(common, s.to_int()));
  }
  return scalar_as<C>(s);
}

// out = op(a, s) for a Scalar s: the scalar takes part in type promotion as a number.
template <typename Op>
Status binary_arith_scalar(const KernelContext& ctx, const Tensor& a, const Scalar& s, Tensor& out,
                           Op&& op) {
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, ResultType().add(a).add(s).get(), out));
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    const C value = scalar_in<C>(s, common);
    return map_elementwise<C, C, 1>(ctx, {&a}, out,
                                    [&](C x) { return static_cast<C>(op(x, value)); });
  });
}

}  // namespace et::kernels

namespace et::kernels {

// out = cmp(a, b) as bool, comparing in the promoted type of a and b.
template <typename Cmp>
Status compare_tensors(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out,
                       Cmp&& cmp) {
  const ScalarType common = ResultType().add(a).add(b).get();
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    return map_elementwise<C, bool, 2>(ctx, {&a, &b}, out,
                                       [&](C x, C y) { return static_cast<bool>(cmp(x, y)); });
  });
}

template <typename Cmp>
Status compare_scalar(const KernelContext& ctx, const Tensor& a, const Scalar& s, Tensor& out,
                      Cmp&& cmp) {
  const ScalarType common = ResultType().add(a).add(s).get();
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    const C value = scalar_in<C>(s, common);
    return map_elementwise<C, bool, 1>(ctx, {&a}, out,
                                       [&](C x) { return static_cast<bool>(cmp(x, value)); });
  });
}

// The floating type an op on real numbers computes in for operands of `common`:
// integers and bool go to float32 (the default dtype), as PyTorch's true division does.
inline ScalarType floating_result(ScalarType common) {
  return is_floating(common) ? common : ScalarType::kFloat;
}

}  // namespace et::kernels
