// aten::where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out)
#include "kernels/util/binary_op.h"

namespace et::kernels {
namespace {

Status where_self_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* cond, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (cond->dtype() != ScalarType::kBool && cond->dtype() != ScalarType::kByte) {
    return ctx.fail("the condition must be a bool tensor");
  }
  ET_ASSIGN_OR_RETURN(ScalarType common,
                      common_dtype(ctx, ResultType().add(*self).add(*other).get(), *out));
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    return map_elementwise<C, C, 3>(ctx, {cond, self, other}, *out,
                                    [](C c, C x, C y) { return c != C(0) ? x : y; });
  });
}

ET_REGISTER_KERNEL("aten::where.self_out", where_self_out);

}  // namespace
}  // namespace et::kernels
