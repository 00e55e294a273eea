// aten::minimum.out(Tensor self, Tensor other, *, Tensor(a!) out)
// NaN in either operand gives NaN, as in PyTorch.
#include "kernels/binary_op.h"

namespace et::kernels {
namespace {

Status minimum_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return binary_arith(ctx, *self, *other, *out, [](auto x, auto y) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      if (x != x) return x;
      if (y != y) return y;
    }
    return x < y ? x : y;
  });
}

ET_REGISTER_KERNEL("aten::minimum.out", minimum_out);

}  // namespace
}  // namespace et::kernels
