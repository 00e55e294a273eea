// aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)
#include "kernels/binary_op.h"

namespace et::kernels {
namespace {

Status add_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Scalar alpha, ctx.scalar_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (alpha.is_floating() && !is_floating(out->dtype())) {
    return ctx.fail("a float alpha needs a floating-point output");
  }
  if (alpha.to_double() == 1.0) {
    return binary_elementwise(ctx, *self, *other, *out, [](auto x, auto y) { return x + y; });
  }
  return binary_elementwise(ctx, *self, *other, *out, [&](auto x, auto y) {
    using T = decltype(x);
    const T a = is_floating(self->dtype()) ? static_cast<T>(alpha.to_double())
                                           : static_cast<T>(alpha.to_int());
    return static_cast<T>(x + a * y);
  });
}

ET_REGISTER_KERNEL("aten::add.out", add_out);

}  // namespace
}  // namespace et::kernels
