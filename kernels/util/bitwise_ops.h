// aten::bitwise_{and,or,xor}.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out):
// integers and bool only. Each op's file registers its instantiation.
#pragma once

#include "kernels/util/binary_op.h"

namespace et::kernels {

template <typename Op>
Status bitwise_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  const ScalarType common = ResultType().add(*self).add(*other).get();
  if (is_floating(common)) return ctx.fail("bitwise ops need integer or bool operands");
  if (common == ScalarType::kBool) {
    return map_elementwise<bool, bool, 2>(
        ctx, {self, other}, *out, [](bool x, bool y) { return static_cast<bool>(Op{}(x, y)); });
  }
  return map_elementwise<int64_t, int64_t, 2>(ctx, {self, other}, *out,
                                              [](int64_t x, int64_t y) { return Op{}(x, y); });
}

}  // namespace et::kernels
