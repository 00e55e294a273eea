// aten::_local_scalar_dense(Tensor self) -> Scalar
// Tensor.item(): the one element of self as a number, written into the value after
// the argument: a float for floating dtypes, an int for integers, a bool for bool.
#include <fmt/format.h>

#include "kernels/util/convert.h"

namespace et::kernels {
namespace {

Status local_scalar_dense(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Value * out, ctx.scalar_output(1));
  if (self->numel() != 1) {
    return ctx.fail(
        fmt::format("a tensor with {} elements cannot be converted to a number", self->numel()));
  }
  const bool ok = visit_dtype(self->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = self->data_as<const T>()[0];
    if constexpr (std::is_same_v<T, Bool8>) {
      out->set_bool(static_cast<bool>(v));
    } else if constexpr (std::is_integral_v<T>) {
      out->set_int(v);
    } else {
      out->set_double(convert_value<double>(v));
    }
  });
  if (!ok) {
    return ctx.unsupported(
        fmt::format("dtype {} is not supported", scalar_type_name(self->dtype())));
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::_local_scalar_dense", local_scalar_dense);

}  // namespace
}  // namespace et::kernels
