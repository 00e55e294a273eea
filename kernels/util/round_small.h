// Rounding to the nearest integer (half to even) without a libm call, for loops that
// round every element (quantization) and must vectorise.
#pragma once

#include <cstdint>

namespace et::kernels {

// std::nearbyint(v) (round half to even) for |v| <= 2^22 (float) or 2^51 (double), and
// NaN for NaN, without a libm call: adding and taking off 1.5 * 2^mantissa bits leaves
// v rounded in the current (nearest) mode, and loops of it vectorise.
template <typename C>
inline C round_small(C v) {
  constexpr C kShift = sizeof(C) == 4 ? C(12582912.0) : C(6755399441055744.0);
  return (v + kShift) - kShift;
}

// Whether [qmin, qmax] is inside round_small's range for C.
template <typename C>
constexpr bool rounds_small(int64_t qmin, int64_t qmax) {
  constexpr int64_t kLimit = sizeof(C) == 4 ? (int64_t{1} << 22) : (int64_t{1} << 51);
  return qmin >= -kLimit && qmax <= kLimit;
}

}  // namespace et::kernels
