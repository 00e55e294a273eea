// Reading index tensors (int64 or int32, negative from the end) for indexing ops.
#pragma once

#include <fmt/format.h>

#include "kernels/util/dense.h"

namespace et::kernels {

// idx's values as row-major int64, each checked to lie in [-size, size) and wrapped
// to [0, size). InvalidArgument naming the op, the bad index and the size.
inline Result<const int64_t*> checked_indices(const KernelContext& ctx, const Tensor& idx,
                                              int64_t size) {
  if (idx.dtype() != ScalarType::kLong && idx.dtype() != ScalarType::kInt) {
    return ctx.fail(
        fmt::format("indices must be int64 or int32, not {}", scalar_type_name(idx.dtype())));
  }
  ET_ASSIGN_OR_RETURN(void* scratch,
                      ctx.temp(static_cast<size_t>(idx.numel()) * sizeof(int64_t) + 1));
  auto* out = static_cast<int64_t*>(scratch);
  if (idx.numel() > 0) {
    ET_ASSIGN_OR_RETURN(const int64_t* raw, dense_as<int64_t>(ctx, idx));
    for (int64_t i = 0; i < idx.numel(); ++i) {
      const int64_t v = raw[i];
      if (v < -size || v >= size) {
        return ctx.fail(fmt::format("index {} is out of range for a dim of size {}", v, size));
      }
      out[i] = v < 0 ? v + size : v;
    }
  }
  return static_cast<const int64_t*>(out);
}

}  // namespace et::kernels
