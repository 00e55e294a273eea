// aten::elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *,
//     Tensor(a!) out)
#include "kernels/util/convert.h"
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status elu_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(double alpha, ctx.double_arg(1));
  ET_ASSIGN_OR_RETURN(double scale, ctx.double_arg(2));
  ET_ASSIGN_OR_RETURN(double input_scale, ctx.double_arg(3));
  return unary_float_out(
      ctx,
      [=](auto x) {
        using T = decltype(x);
        return x > 0 ? convert_value<T>(scale) * x
                     : convert_value<T>(alpha * scale) *
                           std::expm1(convert_value<T>(input_scale) * x);
      },
      4);
}

ET_REGISTER_KERNEL("aten::elu.out", elu_out);

}  // namespace
}  // namespace et::kernels
