// The engine behind elementwise ops: broadcasting, type promotion and any dim order,
// with one inner loop per compute type.
//
// map_elementwise<C, R>(ctx, {a, b, ...}, out, f) computes out = f(a, b, ...) where f
// takes C values and returns R. Inputs already of type C, with out's shape and dim
// order, are read in place; others are first converted (and broadcast) into scratch
// memory in out's memory order. The result is written straight into out when out's
// dtype is R, else through scratch and converted. So the loop that calls f is always
// linear and branch-free, and each op instantiates it only for its compute types.
//
// Half and bfloat16 compute in float (PyTorch's "opmath") and round once per op.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <type_traits>

#include "kernels/util/shape_util.h"
#include "runtime/core/half.h"
#include "runtime/core/kernel.h"

namespace et::kernels {

template <typename T>
constexpr ScalarType scalar_type_of() {
  if constexpr (std::is_same_v<T, float>) return ScalarType::kFloat;
  if constexpr (std::is_same_v<T, double>) return ScalarType::kDouble;
  if constexpr (std::is_same_v<T, int64_t>) return ScalarType::kLong;
  if constexpr (std::is_same_v<T, int32_t>) return ScalarType::kInt;
  if constexpr (std::is_same_v<T, int16_t>) return ScalarType::kShort;
  if constexpr (std::is_same_v<T, int8_t>) return ScalarType::kChar;
  if constexpr (std::is_same_v<T, uint8_t>) return ScalarType::kByte;
  if constexpr (std::is_same_v<T, bool>) return ScalarType::kBool;
  if constexpr (std::is_same_v<T, Half>) return ScalarType::kHalf;
  if constexpr (std::is_same_v<T, BFloat16>) return ScalarType::kBFloat16;
}

// Writes src, broadcast to `shape`, converted to C, into dst laid out with `dst_strides`
// (dense). NotSupported for dtypes the kernels do not handle.
template <typename C>
Status gather_as(const KernelContext& ctx, const Tensor& src, const Shape& shape,
                 std::span<const int64_t> dst_strides, C* dst);

// Converts n values of C into `out`'s memory (dense, out's dtype), in order.
template <typename C>
Status scatter_to(const KernelContext& ctx, const C* src, Tensor& out);

// Resizes out to the broadcast shape of `inputs`.
template <size_t N>
Result<Shape> broadcast_all(const KernelContext& ctx, const std::array<const Tensor*, N>& inputs) {
  Shape shape;
  shape.rank = inputs[0]->dim();
  for (int d = 0; d < shape.rank; ++d) shape.sizes[d] = inputs[0]->size(d);
  for (size_t k = 1; k < N; ++k) {
    const Tensor& t = *inputs[k];
    Shape next;
    next.rank = std::max(shape.rank, t.dim());
    for (int d = 0; d < next.rank; ++d) {
      const int ds = d - (next.rank - shape.rank), dt = d - (next.rank - t.dim());
      const int64_t a = ds >= 0 ? shape.sizes[ds] : 1, b = dt >= 0 ? t.size(dt) : 1;
      if (a != b && a != 1 && b != 1) {
        return ctx.fail(fmt::format("shapes {} and {} cannot be broadcast together",
                                    shape_string(shape.view()), shape_string(t.sizes())));
      }
      next.sizes[d] = a == 1 ? b : a;
    }
    shape = next;
  }
  return shape;
}

template <typename C, typename R, size_t N, typename F>
Status map_elementwise(const KernelContext& ctx, const std::array<const Tensor*, N>& inputs,
                       Tensor& out, F&& f) {
  ET_ASSIGN_OR_RETURN(Shape shape, broadcast_all(ctx, inputs));
  ET_RETURN_IF_ERROR(resize_output(ctx, out, shape));
  const int64_t n = out.numel();
  if (n == 0) return Status();
  std::array<const C*, N> in{};
  for (size_t k = 0; k < N; ++k) {
    const Tensor& t = *inputs[k];
    // Bool memory is never read in place (see Bool8): it goes through gather_as.
    const bool direct =
        !std::is_same_v<C, bool> && t.dtype() == scalar_type_of<C>() && t.numel() == n &&
        t.dim() == out.dim() &&
        std::equal(t.dim_order().begin(), t.dim_order().end(), out.dim_order().begin());
    if (direct) {
      in[k] = t.data_as<const C>();
      continue;
    }
    ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(static_cast<size_t>(n) * sizeof(C)));
    ET_RETURN_IF_ERROR(gather_as<C>(ctx, t, shape, out.strides(), static_cast<C*>(scratch)));
    in[k] = static_cast<const C*>(scratch);
  }
  R* dst;
  const bool direct_out = out.dtype() == scalar_type_of<R>();
  if (direct_out) {
    dst = out.data_as<R>();
  } else {
    ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(static_cast<size_t>(n) * sizeof(R)));
    dst = static_cast<R*>(scratch);
  }
  if constexpr (N == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f(in[0][i]);
  } else if constexpr (N == 2) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f(in[0][i], in[1][i]);
  } else {
    static_assert(N == 3, "one to three inputs");
    for (int64_t i = 0; i < n; ++i) dst[i] = f(in[0][i], in[1][i], in[2][i]);
  }
  if (!direct_out) return scatter_to<R>(ctx, dst, out);
  return Status();
}

// The type a kernel computes in for result dtype `t`: float for the half types and
// float32, double for float64, int64 for integers, bool for bool.
template <typename F>
Status dispatch_compute(const KernelContext& ctx, ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::kHalf:
    case ScalarType::kBFloat16:
    case ScalarType::kFloat:
      return f(float{});
    case ScalarType::kDouble:
      return f(double{});
    case ScalarType::kByte:
    case ScalarType::kChar:
    case ScalarType::kShort:
    case ScalarType::kInt:
    case ScalarType::kLong:
      return f(int64_t{});
    case ScalarType::kBool:
      return f(bool{});
    default:
      return ctx.unsupported(fmt::format("dtype {} is not supported", scalar_type_name(t)));
  }
}

}  // namespace et::kernels
