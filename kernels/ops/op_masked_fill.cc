// aten::masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out)
// out = value where mask, else self; self and the bool mask broadcast together. The
// value is converted to self's dtype.
#include "kernels/util/binary_op.h"

namespace et::kernels {
namespace {

Status masked_fill_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* mask, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Scalar value, ctx.scalar_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (mask->dtype() != ScalarType::kBool) return ctx.fail("the mask must be a bool tensor");
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, self->dtype(), *out));
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    // Through self's own dtype first, so a half tensor gets the rounded value.
    C v{};
    visit_dtype(self->dtype(),
                [&](auto t) { v = convert_value<C>(scalar_as<decltype(t)>(value)); });
    return map_elementwise<C, C, 2>(ctx, {self, mask}, *out,
                                    [v](C x, C m) { return m != C(0) ? v : x; });
  });
}

ET_REGISTER_KERNEL("aten::masked_fill.Scalar_out", masked_fill_scalar_out);

}  // namespace
}  // namespace et::kernels
