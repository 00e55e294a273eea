// aten::fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::fmod.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// C's fmod: the result has the dividend's sign.
#include <cmath>

#include "kernels/util/binary_op.h"

namespace et::kernels {
namespace {

auto fmod_fn(bool& by_zero) {
  return [&by_zero](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      if (y == 0) {
        by_zero = true;
        return C(0);
      }
      return y == -1 ? C(0) : static_cast<C>(x % y);
    } else {
      return std::fmod(x, y);
    }
  };
}

Status fmod_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  bool by_zero = false;
  ET_RETURN_IF_ERROR(binary_arith(ctx, *self, *other, *out, fmod_fn(by_zero)));
  return by_zero ? ctx.fail("integer modulo by zero") : Status();
}

Status fmod_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar other, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  bool by_zero = false;
  ET_RETURN_IF_ERROR(binary_arith_scalar(ctx, *self, other, *out, fmod_fn(by_zero)));
  return by_zero ? ctx.fail("integer modulo by zero") : Status();
}

ET_REGISTER_KERNEL("aten::fmod.Tensor_out", fmod_tensor_out);
ET_REGISTER_KERNEL("aten::fmod.Scalar_out", fmod_scalar_out);

}  // namespace
}  // namespace et::kernels
