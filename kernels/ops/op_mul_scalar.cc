// aten::mul.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
#include "kernels/util/binary_op.h"
#include "kernels/util/integer_math.h"

namespace et::kernels {
namespace {

Status mul_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar other, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return binary_arith_scalar(ctx, *self, other, *out,
                             [](auto x, auto y) { return wrapping_mul(x, y); });
}

ET_REGISTER_KERNEL("aten::mul.Scalar_out", mul_scalar_out);

}  // namespace
}  // namespace et::kernels
