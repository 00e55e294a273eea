// aten::leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out)
#include "kernels/util/convert.h"
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status leaky_relu_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(double slope, ctx.double_arg(1));
  return unary_float_out(
      ctx, [slope](auto x) { return x > 0 ? x : x * convert_value<decltype(x)>(slope); }, 2);
}

ET_REGISTER_KERNEL("aten::leaky_relu.out", leaky_relu_out);

}  // namespace
}  // namespace et::kernels
