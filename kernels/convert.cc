#include "kernels/convert.h"

#include <fmt/format.h>

#include <cstring>

namespace et::kernels {
namespace {

template <typename F>
bool with_type(ScalarType type, F&& f) {
  switch (type) {
    case ScalarType::kFloat:
      f(float{});
      return true;
    case ScalarType::kDouble:
      f(double{});
      return true;
    case ScalarType::kByte:
      f(uint8_t{});
      return true;
    case ScalarType::kChar:
      f(int8_t{});
      return true;
    case ScalarType::kShort:
      f(int16_t{});
      return true;
    case ScalarType::kInt:
      f(int32_t{});
      return true;
    case ScalarType::kLong:
      f(int64_t{});
      return true;
    case ScalarType::kBool:
      f(bool{});
      return true;
    default:
      return false;
  }
}

}  // namespace

Status copy_convert(const KernelContext& ctx, const Tensor& src, Tensor& out) {
  Shape shape;
  shape.rank = src.dim();
  for (int d = 0; d < shape.rank; ++d) shape.sizes[d] = src.size(d);
  ET_RETURN_IF_ERROR(resize_output(ctx, out, shape));
  const std::array<const int64_t*, 2> strides = {src.strides().data(), out.strides().data()};
  if (src.dtype() == out.dtype()) {
    const size_t elsize = out.element_size();
    const auto* in = static_cast<const uint8_t*>(src.data());
    auto* o = static_cast<uint8_t*>(out.mutable_data());
    for_each_index<2>(shape, strides, [&](const std::array<int64_t, 2>& i) {
      std::memcpy(o + i[1] * elsize, in + i[0] * elsize, elsize);
    });
    return Status();
  }
  bool handled = false;
  with_type(src.dtype(), [&](auto from_zero) {
    using From = decltype(from_zero);
    handled = with_type(out.dtype(), [&](auto to_zero) {
      using To = decltype(to_zero);
      const From* in = src.data_as<const From>();
      To* o = out.data_as<To>();
      for_each_index<2>(shape, strides, [&](const std::array<int64_t, 2>& i) {
        o[i[1]] = convert_value<To>(in[i[0]]);
      });
    });
  });
  if (!handled) {
    return ctx.unsupported(fmt::format("converting {} to {} is not supported",
                                       scalar_type_name(src.dtype()),
                                       scalar_type_name(out.dtype())));
  }
  return Status();
}

}  // namespace et::kernels
