// Elementwise binary ops with broadcasting, in any dim order.
#pragma once

#include <fmt/format.h>

#include "kernels/dispatch.h"
#include "kernels/shape_util.h"

namespace et::kernels {

// out = op(a, b) elementwise, with a, b and out all of out's dtype (type promotion
// across dtypes arrives with the full kernel library). `op` is called as op(T a, T b).
template <typename Op>
Status binary_elementwise(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out,
                          Op&& op) {
  if (a.dtype() != out.dtype() || b.dtype() != out.dtype()) {
    return ctx.unsupported(fmt::format("mixed dtypes {}, {} -> {}", scalar_type_name(a.dtype()),
                                       scalar_type_name(b.dtype()), scalar_type_name(out.dtype())));
  }
  ET_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(ctx, a, b));
  ET_RETURN_IF_ERROR(resize_output(ctx, out, shape));
  return dispatch_real(ctx, out.dtype(), [&](auto zero) -> Status {
    using T = decltype(zero);
    const T* pa = a.data_as<const T>();
    const T* pb = b.data_as<const T>();
    T* po = out.data_as<T>();
    const bool same_layout =
        a.dim() == out.dim() && b.dim() == out.dim() && a.numel() == out.numel() &&
        b.numel() == out.numel() &&
        std::equal(a.dim_order().begin(), a.dim_order().end(), out.dim_order().begin()) &&
        std::equal(b.dim_order().begin(), b.dim_order().end(), out.dim_order().begin());
    if (same_layout) {
      for (int64_t i = 0; i < out.numel(); ++i) po[i] = op(pa[i], pb[i]);
      return Status();
    }
    const auto sa = broadcast_strides(a, shape.rank);
    const auto sb = broadcast_strides(b, shape.rank);
    const std::array<const int64_t*, 3> strides = {sa.data(), sb.data(), out.strides().data()};
    for_each_index<3>(shape, strides,
                      [&](const std::array<int64_t, 3>& o) { po[o[2]] = op(pa[o[0]], pb[o[1]]); });
    return Status();
  });
}

}  // namespace et::kernels
