// aten::remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::remainder.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// Python's modulo: the result has the divisor's sign.
#include "kernels/util/binary_op.h"
#include "kernels/util/float_math.h"

namespace et::kernels {
namespace {

template <typename Run>
Status checked(const KernelContext& ctx, Run run) {
  bool by_zero = false;
  ET_RETURN_IF_ERROR(run(by_zero));
  return by_zero ? ctx.fail("integer modulo by zero") : Status();
}

auto remainder_fn(bool& by_zero) {
  return [&by_zero](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      if (y == 0) {
        by_zero = true;
        return C(0);
      }
      if (y == -1) return C(0);
      return remainder_value(x, y);
    } else {
      return remainder_value(x, y);
    }
  };
}

Status remainder_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return checked(ctx,
                 [&](bool& z) { return binary_arith(ctx, *self, *other, *out, remainder_fn(z)); });
}

Status remainder_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar other, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return checked(
      ctx, [&](bool& z) { return binary_arith_scalar(ctx, *self, other, *out, remainder_fn(z)); });
}

ET_REGISTER_KERNEL("aten::remainder.Tensor_out", remainder_tensor_out);
ET_REGISTER_KERNEL("aten::remainder.Scalar_out", remainder_scalar_out);

}  // namespace
}  // namespace et::kernels
