// aten::bitwise_not.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status bitwise_not_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  if (is_floating(self->dtype())) return ctx.fail("bitwise_not needs an integer or bool input");
  return unary_same_out</*kAllowBool=*/true>(ctx, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>) {
      return !x;
    } else if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(~x);
    } else {
      return x;  // unreachable: floating inputs are refused above
    }
  });
}

ET_REGISTER_KERNEL("aten::bitwise_not.out", bitwise_not_out);

}  // namespace
}  // namespace et::kernels
