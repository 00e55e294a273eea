// Filling a tensor with one value, converted to its dtype.
#pragma once

#include "kernels/util/convert.h"
#include "runtime/core/kernel.h"

namespace et::kernels {

// Sets every element of `out` (already sized) to `value`; NotSupported for dtypes the
// kernels do not handle.
inline Status fill_with(const KernelContext& ctx, Tensor& out, const Scalar& value) {
  const bool ok = visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = value.is_floating()              ? convert_value<T>(value.d)
                : value.kind == ValueKind::kBool ? convert_value<T>(value.b)
                                                 : convert_value<T>(value.i);
    T* p = out.data_as<T>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = v;
  });
  return ok ? Status() : ctx.unsupported("dtype is not supported");
}

}  // namespace et::kernels
