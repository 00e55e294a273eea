// Element conversion between dtypes, as PyTorch does it on CPU, and strided copies
// that convert on the way.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/util/shape_util.h"
#include "runtime/core/half.h"
#include "runtime/core/kernel.h"

namespace et::kernels {

// Converts one value. Float to integer truncates toward zero; NaN or out-of-range
// values give the type's minimum for 32- and 64-bit targets (what x86 conversion
// instructions, and so PyTorch, produce) and wrap through int64 for narrower ones.
// To bool: nonzero is true. Never undefined behaviour.
// How kernels read and write bool tensor memory: a byte, true when nonzero. Memory
// from a program or a client may hold bytes other than 0 and 1, which reading as C++
// bool would make undefined behaviour.
struct Bool8 {
  uint8_t byte = 0;
  Bool8() = default;
  explicit Bool8(bool b) : byte(b ? 1 : 0) {}
  explicit operator bool() const { return byte != 0; }
};

template <typename T>
inline constexpr bool is_half_type_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename To, typename From>
To convert_value(From x) {
  if constexpr (std::is_same_v<From, Bool8>) {
    return convert_value<To>(static_cast<bool>(x));
  } else if constexpr (std::is_same_v<To, Bool8>) {
    return Bool8(convert_value<bool>(x));
  } else if constexpr (is_half_type_v<From>) {
    return convert_value<To>(static_cast<float>(x));
  } else if constexpr (is_half_type_v<To>) {
    return To(convert_value<float>(x));
  } else if constexpr (std::is_same_v<To, float> && std::is_same_v<From, double>) {
    // Out-of-range doubles become infinities (a plain cast would be undefined).
    if (x > 3.4028234663852886e38) return std::numeric_limits<float>::infinity();
    if (x < -3.4028234663852886e38) return -std::numeric_limits<float>::infinity();
    return static_cast<float>(x);
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if constexpr (sizeof(To) >= 4) {
      static_assert(std::is_signed_v<To>, "32/64-bit targets are int32 and int64");
      constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());  // -2^(n-1), exact
      if (!(x >= lo && x < -lo)) return std::numeric_limits<To>::min();       // NaN fails too
      return static_cast<To>(x);
    } else {
      if (std::isnan(x) || x < -9.2e18 || x > 9.2e18) return To(0);
      return static_cast<To>(static_cast<int64_t>(x));
    }
  } else {
    return static_cast<To>(x);
  }
}

// A Scalar argument as a value of type C, converted as convert_value does.
template <typename C>
C scalar_as(const Scalar& s) {
  if (s.is_floating()) return convert_value<C>(s.d);
  if (s.kind == ValueKind::kBool) return convert_value<C>(s.b);
  return convert_value<C>(s.i);
}

// Calls f(T{}) with the C++ element type of `type`; false when the kernels do not
// handle that dtype (quantized, sub-byte, float8, unsigned 16/32/64).
template <typename F>
bool visit_dtype(ScalarType type, F&& f) {
  switch (type) {
    case ScalarType::kFloat:
      f(float{});
      return true;
    case ScalarType::kDouble:
      f(double{});
      return true;
    case ScalarType::kHalf:
      f(Half{});
      return true;
    case ScalarType::kBFloat16:
      f(BFloat16{});
      return true;
    case ScalarType::kByte:
      f(uint8_t{});
      return true;
    case ScalarType::kChar:
      f(int8_t{});
      return true;
    case ScalarType::kShort:
      f(int16_t{});
      return true;
    case ScalarType::kInt:
      f(int32_t{});
      return true;
    case ScalarType::kLong:
      f(int64_t{});
      return true;
    case ScalarType::kBool:
      f(Bool8{});
      return true;
    default:
      return false;
  }
}

// Copies a `shape`-shaped block between two strided layouts (strides in elements),
// converting from `from` to `to`. False when a dtype is not handled.
bool convert_strided(const Shape& shape, ScalarType from, const void* src,
                     const int64_t* src_strides, ScalarType to, void* dst,
                     const int64_t* dst_strides);

// Copies src into out (same shape), converting dtype and laying elements out in each
// tensor's own dim order. NotSupported naming both dtypes when either is not one of
// float16, bfloat16, float32, float64, int8/16/32/64, uint8, bool.
Status copy_convert(const KernelContext& ctx, const Tensor& src, Tensor& out);

}  // namespace et::kernels
