// aten::floor.out(Tensor self, *, Tensor(a!) out)
// Integers pass through unchanged, as in PyTorch.
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status floor_out(KernelContext& ctx) {
  return unary_same_out(ctx, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::floor(x);
    } else {
      return x;
    }
  });
}

ET_REGISTER_KERNEL("aten::floor.out", floor_out);

}  // namespace
}  // namespace et::kernels
