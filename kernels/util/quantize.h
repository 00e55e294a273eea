// What the quantized_decomposed kernels (ExecuTorch's quantized library) share: the
// integer types a quantized value may take, the checks each op makes of its range and
// parameters, and the rounding eager PyTorch uses (to nearest, ties to even).
//
// Precision follows eager PyTorch's type promotion, so results match it bit for bit:
// a float32 input with float32 scales (or a Python float scale) computes in float32;
// a float64 scales tensor promotes the arithmetic to float64.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/util/dense.h"
#include "kernels/util/round_small.h"

namespace et::kernels {

// The range of values integer type `t` holds; false for a type quantized values
// cannot take (floats, bool, 64-bit).
inline bool quantized_type_range(ScalarType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case ScalarType::kByte:
      *lo = 0, *hi = 255;
      return true;
    case ScalarType::kChar:
      *lo = -128, *hi = 127;
      return true;
    case ScalarType::kShort:
      *lo = -32768, *hi = 32767;
      return true;
    case ScalarType::kUInt16:
    case ScalarType::kBits16:
      *lo = 0, *hi = 65535;
      return true;
    case ScalarType::kInt:
      *lo = INT32_MIN, *hi = INT32_MAX;
      return true;
    default:
      return false;
  }
}

// The quantized dtype argument `dtype_arg` (a ScalarType code) and [qmin, qmax]:
// a type quantized values take, a range inside it, and `out` (when given) of that type.
inline Result<ScalarType> quantized_dtype(const KernelContext& ctx, int64_t dtype_arg, int64_t qmin,
                                          int64_t qmax, const Tensor* out) {
  Result<ScalarType> dtype =
      scalar_type_from_code(static_cast<int>(std::clamp<int64_t>(dtype_arg, INT32_MIN, INT32_MAX)));
  int64_t lo = 0, hi = 0;
  if (!dtype.ok() || !quantized_type_range(*dtype, &lo, &hi)) {
    return ctx.fail(
        fmt::format("dtype {} is not an integer type quantized values take (uint8, "
                    "int8, int16, uint16, int32)",
                    dtype_arg));
  }
  if (qmin > qmax || qmin < lo || qmax > hi) {
    return ctx.fail(fmt::format("quant range [{}, {}] is not inside {}'s [{}, {}]", qmin, qmax,
                                scalar_type_name(*dtype), lo, hi));
  }
  if (out != nullptr && out->dtype() != *dtype) {
    return ctx.fail(fmt::format("out is {}, the dtype argument says {}",
                                scalar_type_name(out->dtype()), scalar_type_name(*dtype)));
  }
  return *dtype;
}

// v rounded to the precision of float type t (a float16/bfloat16 computation).
inline float round_to(ScalarType t, float v) {
  if (t == ScalarType::kHalf) return static_cast<float>(Half(v));
  if (t == ScalarType::kBFloat16) return static_cast<float>(BFloat16(v));
  return v;
}

// The input of a quantize op: a float tensor.
inline bool is_quantizable(ScalarType t) {
  return t == ScalarType::kFloat || t == ScalarType::kDouble || t == ScalarType::kHalf ||
         t == ScalarType::kBFloat16;
}

// clamp(round_half_even(v) + zero_point, qmin, qmax), as eager's
// torch.clamp(torch.round(x * inv_scale) + zero_point, qmin, qmax) with each step in C.
template <typename C>
C quantize_rounded(C scaled, C zero_point, int64_t qmin, int64_t qmax) {
  C v = static_cast<C>(std::nearbyint(scaled)) + zero_point;
  v = std::max(v, static_cast<C>(qmin));  // NaN stays NaN; the caller's store maps it
  return std::min(v, static_cast<C>(qmax));
}

// A per-row parameter tensor (scales or zero points) of a per-token op: one value per
// row of `input` (the product of its leading dims), laid out with the input's leading
// dims and a trailing 1, or flat.
inline Status check_per_row(const KernelContext& ctx, const Tensor& input, const Tensor& params,
                            std::string_view what) {
  const int64_t rows =
      input.dim() == 0 ? 1 : input.numel() / std::max<int64_t>(1, input.size(input.dim() - 1));
  if (params.numel() != rows) {
    return ctx.fail(fmt::format("{} has {} values for the {} rows of input {}", what,
                                params.numel(), rows, shape_string(input.sizes())));
  }
  return Status();
}

// The output of a dequantize op: a float tensor of out_dtype when that is given
// (float32 is eager's default).
inline Status check_dequantized_out(const KernelContext& ctx, std::optional<int64_t> out_dtype,
                                    const Tensor& out) {
  if (!is_quantizable(out.dtype())) {
    return ctx.fail(
        fmt::format("out is {}; a dequantized value is float32, float64, float16 "
                    "or bfloat16",
                    scalar_type_name(out.dtype())));
  }
  if (out_dtype && *out_dtype != static_cast<int64_t>(out.dtype())) {
    return ctx.fail(
        fmt::format("out is {}, out_dtype says {}", scalar_type_name(out.dtype()), *out_dtype));
  }
  return Status();
}

// Where channel `axis` lies in a row-major walk of a tensor: element i belongs to
// channel (i / inner) % channels.
struct ChannelLayout {
  int64_t channels = 1, inner = 1;
  int64_t channel(int64_t i) const { return (i / inner) % channels; }
};

// The layout of `input` along `axis` (negative counts from the end), whose size must be
// the number of `scales`.
inline Result<ChannelLayout> channel_layout(const KernelContext& ctx, const Tensor& input,
                                            int64_t axis, const Tensor& scales) {
  const int64_t rank = input.dim();
  if (axis < -rank || axis >= rank) {
    return ctx.fail(fmt::format("axis {} is outside the {} dims of the input", axis, rank));
  }
  if (axis < 0) axis += rank;
  ChannelLayout l;
  l.channels = input.size(axis);
  for (int64_t d = axis + 1; d < rank; ++d) l.inner *= input.size(d);
  if (scales.numel() != l.channels) {
    return ctx.fail(
        fmt::format("{} scales for the {} channels of dim {}", scales.numel(), l.channels, axis));
  }
  return l;
}

// The one value of a one-element parameter tensor (the .Tensor overloads' scale and
// zero point), converted to C.
template <typename C>
Result<C> single_value(const KernelContext& ctx, const Tensor& t, std::string_view what) {
  if (t.numel() != 1) {
    return ctx.fail(fmt::format("{} must hold one value; it is {}", what, shape_string(t.sizes())));
  }
  ET_ASSIGN_OR_RETURN(const C* v, dense_as<C>(ctx, t));
  return v[0];
}

// The value stored for a NaN input: eager's float -> int cast of NaN is undefined; we
// store the lower bound (as x86's conversion, saturated, does for int8 results).
template <typename C>
C nan_to(C v, int64_t qmin) {
  return std::isnan(v) ? static_cast<C>(qmin) : v;
}

}  // namespace et::kernels
