// aten::floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out)
// torch.div(self, other, rounding_mode="floor"): integer types stay integers.
#include "kernels/util/scalar_divide.h"

namespace et::kernels {
namespace {

Status floor_divide_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  ET_ASSIGN_OR_RETURN(ScalarType common,
                      common_dtype(ctx, ResultType().add(*self).add(*other).get(), *out));
  if (common == ScalarType::kBool) return ctx.fail("dividing bool tensors is not supported");
  bool by_zero = false;
  ET_RETURN_IF_ERROR(dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    if constexpr (std::is_same_v<C, bool>) {
      return Status();  // refused above
    } else {
      return map_elementwise<C, C, 2>(
          ctx, {self, other}, *out, [&](C x, C y) { return rounded_divide(x, y, true, by_zero); });
    }
  }));
  return by_zero ? ctx.fail("integer division by zero") : Status();
}

ET_REGISTER_KERNEL("aten::floor_divide.out", floor_divide_out);

}  // namespace
}  // namespace et::kernels
