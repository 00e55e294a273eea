// PyTorch's definitions of division-like and clamping ops on numbers, shared by the
// tensor and scalar forms of each op.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace et::kernels {

// Floor division as torch.div(..., rounding_mode="floor") computes it for floats:
// exact where a/b rounded first would not be.
template <typename T>
T floor_divide_float(T a, T b) {
  if (b == 0) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(T(0), a / b);
  T floored = std::floor(div);
  if (div - floored > T(0.5)) floored += 1;
  return floored;
}

template <typename T>
T floor_divide_int(T a, T b) {  // REQUIRES: b != 0
  const T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Python's modulo: the result takes the divisor's sign.
template <typename T>
T remainder_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T mod = std::fmod(a, b);
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
    return mod;
  } else {
    const T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
}

// clamp that keeps NaN, as PyTorch's does.
template <typename T>
T clamp_value(T x, T lo, T hi, bool has_lo, bool has_hi) {
  if constexpr (std::is_floating_point_v<T>) {
    if (x != x) return x;
  }
  if (has_lo && x < lo) x = lo;
  if (has_hi && x > hi) x = hi;
  return x;
}

}  // namespace et::kernels
