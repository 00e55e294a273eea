// aten::sign.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status sign_out(KernelContext& ctx) {
  return unary_same_out</*kAllowBool=*/true>(ctx, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) {
      if (x != x) return x;  // NaN
    }
    return static_cast<C>((C(0) < x) - (x < C(0)));
  });
}

ET_REGISTER_KERNEL("aten::sign.out", sign_out);

}  // namespace
}  // namespace et::kernels
