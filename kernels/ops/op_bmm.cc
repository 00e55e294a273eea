// aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)
#include <fmt/format.h>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status bmm_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* a, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* b, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (a->dim() != 3 || b->dim() != 3 || a->size(0) != b->size(0) || a->size(2) != b->size(1)) {
    return ctx.fail(fmt::format("cannot batch-multiply {} by {}", shape_string(a->sizes()),
                                shape_string(b->sizes())));
  }
  if (a->dtype() != b->dtype()) return ctx.fail("operands have different dtypes");
  const int64_t batch = a->size(0), m = a->size(1), k = a->size(2), n = b->size(2);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{batch, m, n}, 3}));
  return dispatch_compute(ctx, a->dtype(), [&](auto zero) -> Status {
    using C = std::conditional_t<std::is_same_v<decltype(zero), bool>, int64_t, decltype(zero)>;
    ET_ASSIGN_OR_RETURN(const C* pa, dense_as<C>(ctx, *a));
    ET_ASSIGN_OR_RETURN(const C* pb, dense_as<C>(ctx, *b));
    ET_ASSIGN_OR_RETURN(C * pc, dense_result<C>(ctx, *out));
    for (int64_t i = 0; i < batch; ++i) {
      parallel_gemm<C>(m, n, k, pa + i * m * k, k, pb + i * k * n, n, pc + i * m * n, n, false);
    }
    return store_dense<C>(ctx, pc, *out);
  });
}

ET_REGISTER_KERNEL("aten::bmm.out", bmm_out);

}  // namespace
}  // namespace et::kernels
