// aten::atan2.out(Tensor self, Tensor other, *, Tensor(a!) out)
#include <cmath>

#include "kernels/util/binary_op.h"

namespace et::kernels {
namespace {

Status atan2_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  ET_ASSIGN_OR_RETURN(
      ScalarType common,
      common_dtype(ctx, floating_result(ResultType().add(*self).add(*other).get()), *out));
  if (common == ScalarType::kDouble) {
    return map_elementwise<double, double, 2>(ctx, {self, other}, *out,
                                              [](double y, double x) { return std::atan2(y, x); });
  }
  return map_elementwise<float, float, 2>(ctx, {self, other}, *out,
                                          [](float y, float x) { return std::atan2(y, x); });
}

ET_REGISTER_KERNEL("aten::atan2.out", atan2_out);

}  // namespace
}  // namespace et::kernels
