#include "kernels/util/elementwise.h"

#include <fmt/format.h>

#include "kernels/util/convert.h"

namespace et::kernels {

template <typename C>
Status gather_as(const KernelContext& ctx, const Tensor& src, const Shape& shape,
                 std::span<const int64_t> dst_strides, C* dst) {
  // Never read outside src: its shape must broadcast to `shape`.
  if (src.dim() > shape.rank) {
    return ctx.fail(fmt::format("shape {} does not broadcast to {}", shape_string(src.sizes()),
                                shape_string(shape.view())));
  }
  for (int d = 0; d < src.dim(); ++d) {
    const int64_t want = shape.sizes[shape.rank - src.dim() + d];
    if (src.size(d) != 1 && src.size(d) != want) {
      return ctx.fail(fmt::format("shape {} does not broadcast to {}", shape_string(src.sizes()),
                                  shape_string(shape.view())));
    }
  }
  const auto src_strides = broadcast_strides(src, shape.rank);
  const std::array<const int64_t*, 2> strides = {src_strides.data(), dst_strides.data()};
  const bool ok = visit_dtype(src.dtype(), [&](auto zero) {
    using From = decltype(zero);
    const From* in = src.data_as<const From>();
    for_each_index<2>(shape, strides, [&](const std::array<int64_t, 2>& i) {
      dst[i[1]] = convert_value<C>(in[i[0]]);
    });
  });
  if (!ok)
    return ctx.unsupported(fmt::format("dtype {} is not supported", scalar_type_name(src.dtype())));
  return Status();
}

template <typename C>
Status scatter_to(const KernelContext& ctx, const C* src, Tensor& out) {
  const int64_t n = out.numel();
  const bool ok = visit_dtype(out.dtype(), [&](auto zero) {
    using To = decltype(zero);
    To* o = out.data_as<To>();
    for (int64_t i = 0; i < n; ++i) o[i] = convert_value<To>(src[i]);
  });
  if (!ok)
    return ctx.unsupported(fmt::format("dtype {} is not supported", scalar_type_name(out.dtype())));
  return Status();
}

#define ET_INSTANTIATE(C)                                                         \
  template Status gather_as<C>(const KernelContext&, const Tensor&, const Shape&, \
                               std::span<const int64_t>, C*);                     \
  template Status scatter_to<C>(const KernelContext&, const C*, Tensor&);
ET_INSTANTIATE(float)
ET_INSTANTIATE(double)
ET_INSTANTIATE(int64_t)
ET_INSTANTIATE(bool)
ET_INSTANTIATE(int8_t)
ET_INSTANTIATE(uint8_t)
#undef ET_INSTANTIATE

}  // namespace et::kernels
