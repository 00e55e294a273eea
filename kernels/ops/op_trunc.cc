// aten::trunc.out(Tensor self, *, Tensor(a!) out)
// Integers pass through unchanged, as in PyTorch.
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status trunc_out(KernelContext& ctx) {
  return unary_same_out(ctx, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::trunc(x);
    } else {
      return x;
    }
  });
}

ET_REGISTER_KERNEL("aten::trunc.out", trunc_out);

}  // namespace
}  // namespace et::kernels
