// aten::round.out(Tensor self, *, Tensor(a!) out)
// Integers pass through unchanged, as in PyTorch.
// Halfway cases round to even (the default floating-point rounding mode).
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status round_out(KernelContext& ctx) {
  return unary_same_out(ctx, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::nearbyint(x);
    } else {
      return x;
    }
  });
}

ET_REGISTER_KERNEL("aten::round.out", round_out);

}  // namespace
}  // namespace et::kernels
