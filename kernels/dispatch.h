// Calling a templated kernel body with the C++ type of a tensor's dtype.
#pragma once

#include <fmt/format.h>

#include <cstdint>

#include "runtime/kernel.h"
#include "runtime/scalar_type.h"

namespace et::kernels {

// Calls f(T{}) for the real (non-bool) dtypes float32, float64 and the integers;
// NotSupported naming op and dtype otherwise.
template <typename F>
Status dispatch_real(const KernelContext& ctx, ScalarType type, F&& f) {
  switch (type) {
    case ScalarType::kFloat:
      return f(float{});
    case ScalarType::kDouble:
      return f(double{});
    case ScalarType::kByte:
      return f(uint8_t{});
    case ScalarType::kChar:
      return f(int8_t{});
    case ScalarType::kShort:
      return f(int16_t{});
    case ScalarType::kInt:
      return f(int32_t{});
    case ScalarType::kLong:
      return f(int64_t{});
    default:
      return ctx.unsupported(fmt::format("dtype {} is not supported", scalar_type_name(type)));
  }
}

// float32 and float64 only.
template <typename F>
Status dispatch_float(const KernelContext& ctx, ScalarType type, F&& f) {
  switch (type) {
    case ScalarType::kFloat:
      return f(float{});
    case ScalarType::kDouble:
      return f(double{});
    default:
      return ctx.unsupported(fmt::format("dtype {} is not supported", scalar_type_name(type)));
  }
}

}  // namespace et::kernels
