// aten::isnan.out(Tensor self, *, Tensor(a!) out) -> bool
#include <cmath>

#include "kernels/util/binary_op.h"

namespace et::kernels {
namespace {

Status isnan_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (!is_floating(self->dtype())) {
    return map_elementwise<bool, bool, 1>(ctx, {self}, *out, [](bool) { return false; });
  }
  if (self->dtype() == ScalarType::kDouble) {
    return map_elementwise<double, bool, 1>(ctx, {self}, *out, [](double x) { return x != x; });
  }
  return map_elementwise<float, bool, 1>(ctx, {self}, *out, [](float x) { return x != x; });
}

ET_REGISTER_KERNEL("aten::isnan.out", isnan_out);

}  // namespace
}  // namespace et::kernels
