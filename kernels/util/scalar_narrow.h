// An integer Scalar as PyTorch uses it against an integer tensor: converted to the
// common dtype first (a wrapped number), so 300 against int8 is 44.
#pragma once

#include <cstdint>

#include "runtime/core/scalar_type.h"

namespace et::kernels {

// `v` (an int64 holding any bits) as a value of the integer dtype `t`: the low
// bits, sign-extended for signed types; other dtypes keep v.
inline int64_t narrow_to(ScalarType t, int64_t v) {
  const auto u = static_cast<uint64_t>(v);
  switch (t) {
    case ScalarType::kByte:
      return static_cast<uint8_t>(u);
    case ScalarType::kChar:
      return static_cast<int8_t>(static_cast<uint8_t>(u));
    case ScalarType::kShort:
      return static_cast<int16_t>(static_cast<uint16_t>(u));
    case ScalarType::kInt:
      return static_cast<int32_t>(static_cast<uint32_t>(u));
    default:
      return v;
  }
}

}  // namespace et::kernels
