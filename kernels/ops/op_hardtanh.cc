// aten::hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out)
#include "kernels/util/convert.h"
#include "kernels/util/float_math.h"
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status hardtanh_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(double lo, ctx.double_arg(1));
  ET_ASSIGN_OR_RETURN(double hi, ctx.double_arg(2));
  // Arguments are (self, min_val, max_val, out): move out to where unary ops expect it.
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, self->dtype(), *out));
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    if constexpr (std::is_same_v<C, bool>) {
      return ctx.fail("bool input is not supported");
    } else {
      const C l = convert_value<C>(lo), h = convert_value<C>(hi);
      return map_elementwise<C, C, 1>(ctx, {self}, *out,
                                      [&](C x) { return clamp_value(x, l, h, true, true); });
    }
  });
}

ET_REGISTER_KERNEL("aten::hardtanh.out", hardtanh_out);

}  // namespace
}  // namespace et::kernels
