// Writing a source tensor into a strided view of an output, as select_scatter and
// slice_scatter do once the output holds a copy of self.
#pragma once

#include <fmt/format.h>

#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"

namespace et::kernels {

// Copies src (of `view`'s shape) to dst laid out with dst_strides (elements of out),
// converting to out's dtype. NotSupported naming both dtypes when no conversion exists.
inline Status copy_into_view(const KernelContext& ctx, const Shape& view, const Tensor& src,
                             const Tensor& out, uint8_t* dst, const int64_t* dst_strides) {
  if (src.dtype() == out.dtype()) {
    strided_copy(view, src.data(), src.strides().data(), dst, dst_strides, src.element_size());
    return Status();
  }
  if (!convert_strided(view, src.dtype(), src.data(), src.strides().data(), out.dtype(), dst,
                       dst_strides)) {
    return ctx.unsupported(fmt::format("copying {} into {}", scalar_type_name(src.dtype()),
                                       scalar_type_name(out.dtype())));
  }
  return Status();
}

}  // namespace et::kernels
