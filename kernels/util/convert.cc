#include "kernels/util/convert.h"

#include <fmt/format.h>

#include <cstring>

namespace et::kernels {

bool convert_strided(const Shape& shape, ScalarType from, const void* src,
                     const int64_t* src_strides, ScalarType to, void* dst,
                     const int64_t* dst_strides) {
  const std::array<const int64_t*, 2> strides = {src_strides, dst_strides};
  bool handled = false;
  visit_dtype(from, [&](auto from_zero) {
    using From = decltype(from_zero);
    handled = visit_dtype(to, [&](auto to_zero) {
      using To = decltype(to_zero);
      const From* in = static_cast<const From*>(src);
      To* o = static_cast<To*>(dst);
      for_each_index<2>(shape, strides, [&](const std::array<int64_t, 2>& i) {
        o[i[1]] = convert_value<To>(in[i[0]]);
      });
    });
  });
  return handled;
}

Status copy_convert(const KernelContext& ctx, const Tensor& src, Tensor& out) {
  Shape shape;
  shape.rank = src.dim();
  for (int d = 0; d < shape.rank; ++d) shape.sizes[d] = src.size(d);
  ET_RETURN_IF_ERROR(resize_output(ctx, out, shape));
  if (src.dtype() == out.dtype()) {
    const size_t elsize = out.element_size();
    const auto* in = static_cast<const uint8_t*>(src.data());
    auto* o = static_cast<uint8_t*>(out.mutable_data());
    const std::array<const int64_t*, 2> strides = {src.strides().data(), out.strides().data()};
    for_each_index<2>(shape, strides, [&](const std::array<int64_t, 2>& i) {
      std::memmove(o + i[1] * elsize, in + i[0] * elsize, elsize);
    });
    return Status();
  }
  if (!convert_strided(shape, src.dtype(), src.data(), src.strides().data(), out.dtype(),
                       out.mutable_data(), out.strides().data())) {
    return ctx.unsupported(fmt::format("converting {} to {} is not supported",
                                       scalar_type_name(src.dtype()),
                                       scalar_type_name(out.dtype())));
  }
  return Status();
}

}  // namespace et::kernels
