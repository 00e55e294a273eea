// aten::neg.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status neg_out(KernelContext& ctx) {
  return unary_same_out(ctx, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(0ull - static_cast<uint64_t>(x));  // wraps like int arithmetic
    } else {
      return -x;
    }
  });
}

ET_REGISTER_KERNEL("aten::neg.out", neg_out);

}  // namespace
}  // namespace et::kernels
