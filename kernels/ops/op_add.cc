// aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)
#include "kernels/util/binary_op.h"
#include "kernels/util/integer_math.h"

namespace et::kernels {
namespace {

Status add_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Scalar alpha, ctx.scalar_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (alpha.is_floating() && !is_floating(ResultType().add(*self).add(*other).get())) {
    return ctx.fail("a float alpha needs floating-point operands");
  }
  if (alpha.to_double() == 1.0) {
    return binary_arith(ctx, *self, *other, *out,
                        [](auto x, auto y) { return wrapping_add(x, y); });
  }
  const double a = alpha.to_double();
  const int64_t ai = alpha.to_int();
  return binary_arith(ctx, *self, *other, *out, [&](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) {
      return x + static_cast<C>(a) * y;
    } else {
      return wrapping_add(x, wrapping_mul(static_cast<C>(ai), y));
    }
  });
}

ET_REGISTER_KERNEL("aten::add.out", add_out);

}  // namespace
}  // namespace et::kernels
