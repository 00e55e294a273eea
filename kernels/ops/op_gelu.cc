// aten::gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out)
#include <fmt/format.h>

#include <cmath>

#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status gelu_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(auto approximate, ctx.optional_string_arg(1));
  const std::string_view mode = approximate.value_or("none");
  if (mode == "tanh") {
    return unary_float_out(
        ctx,
        [](auto x) {
          using T = decltype(x);
          const T k = static_cast<T>(0.7978845608028654);  // sqrt(2 / pi)
          return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
        },
        2);
  }
  if (mode != "none")
    return ctx.fail(fmt::format("approximate='{}' is not 'none' or 'tanh'", mode));
  return unary_float_array_out(
      ctx, gelu_array,
      [](auto x) {
        using T = decltype(x);
        return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(0.7071067811865476)));
      },
      2);
}

ET_REGISTER_KERNEL("aten::gelu.out", gelu_out);

}  // namespace
}  // namespace et::kernels
