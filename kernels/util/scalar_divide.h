// Rounded division shared by div.Scalar_mode_out and floor_divide.out: "trunc" and
// "floor" keep integer types; an integer divided by zero fails the call (as in
// PyTorch), and INT_MIN / -1 wraps instead of trapping.
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/util/binary_op.h"
#include "kernels/util/float_math.h"

namespace et::kernels {

// The division on values of the compute type C. Sets `by_zero` on an integer division
// by zero (and returns 0). REQUIRES: C is not bool (callers refuse bool first).
template <typename C>
C rounded_divide(C x, C y, bool floor, bool& by_zero) {
  if constexpr (std::is_floating_point_v<C>) {
    return floor ? floor_divide_float(x, y) : std::trunc(x / y);
  } else {
    if (y == 0) {
      by_zero = true;
      return 0;
    }
    if (y == -1) return static_cast<C>(0ull - static_cast<uint64_t>(x));
    return floor ? floor_divide_int(x, y) : x / y;
  }
}

}  // namespace et::kernels
