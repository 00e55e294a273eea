// aten::abs.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status abs_out(KernelContext& ctx) {
  return unary_same_out(ctx, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_integral_v<C>) {
      return x < 0 ? static_cast<C>(0ull - static_cast<uint64_t>(x)) : x;
    } else {
      return std::abs(x);
    }
  });
}

ET_REGISTER_KERNEL("aten::abs.out", abs_out);

}  // namespace
}  // namespace et::kernels
