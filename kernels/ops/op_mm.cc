// aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)
#include <fmt/format.h>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status mm_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* a, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* b, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (a->dim() != 2 || b->dim() != 2 || a->size(1) != b->size(0)) {
    return ctx.fail(fmt::format("cannot multiply {} by {}", shape_string(a->sizes()),
                                shape_string(b->sizes())));
  }
  if (a->dtype() != b->dtype()) return ctx.fail("operands have different dtypes");
  const int64_t m = a->size(0), k = a->size(1), n = b->size(1);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{m, n}, 2}));
  return dispatch_compute(ctx, a->dtype(), [&](auto zero) -> Status {
    using C = std::conditional_t<std::is_same_v<decltype(zero), bool>, int64_t, decltype(zero)>;
    ET_ASSIGN_OR_RETURN(const C* pa, dense_as<C>(ctx, *a));
    ET_ASSIGN_OR_RETURN(const C* pb, dense_as<C>(ctx, *b));
    ET_ASSIGN_OR_RETURN(C * pc, dense_result<C>(ctx, *out));
    parallel_gemm<C>(m, n, k, pa, k, pb, n, pc, n, false);
    return store_dense<C>(ctx, pc, *out);
  });
}

ET_REGISTER_KERNEL("aten::mm.out", mm_out);

}  // namespace
}  // namespace et::kernels
