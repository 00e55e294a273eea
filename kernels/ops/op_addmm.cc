// aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1,
//                 Scalar alpha=1, Tensor(a!) out)
// out = beta * self + alpha * (mat1 @ mat2), self broadcast to [m, n]; beta == 0
// ignores self entirely (NaN in it does not propagate), as in PyTorch.
#include <fmt/format.h>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status addmm_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* mat1, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* mat2, ctx.input(2));
  ET_ASSIGN_OR_RETURN(Scalar beta, ctx.scalar_arg(3));
  ET_ASSIGN_OR_RETURN(Scalar alpha, ctx.scalar_arg(4));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(5));
  if (mat1->dim() != 2 || mat2->dim() != 2 || mat1->size(1) != mat2->size(0)) {
    return ctx.fail(fmt::format("cannot multiply {} by {}", shape_string(mat1->sizes()),
                                shape_string(mat2->sizes())));
  }
  if (mat1->dtype() != mat2->dtype()) return ctx.fail("operands have different dtypes");
  const int64_t m = mat1->size(0), k = mat1->size(1), n = mat2->size(1);
  const Shape shape{{m, n}, 2};
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (self->dim() > 2) return ctx.fail("self must broadcast to the product's shape");
  return dispatch_compute(ctx, mat1->dtype(), [&](auto zero) -> Status {
    using C = std::conditional_t<std::is_same_v<decltype(zero), bool>, int64_t, decltype(zero)>;
    ET_ASSIGN_OR_RETURN(const C* pa, dense_as<C>(ctx, *mat1));
    ET_ASSIGN_OR_RETURN(const C* pb, dense_as<C>(ctx, *mat2));
    ET_ASSIGN_OR_RETURN(C * pc, dense_result<C>(ctx, *out));
    parallel_gemm<C>(m, n, k, pa, k, pb, n, pc, n, false);
    const C a = scalar_as<C>(alpha), b = scalar_as<C>(beta);
    if (b == C(0)) {
      if (a != C(1)) {
        for (int64_t i = 0; i < m * n; ++i) pc[i] *= a;
      }
      return store_dense<C>(ctx, pc, *out);
    }
    ET_ASSIGN_OR_RETURN(void* bias_scratch, ctx.temp(static_cast<size_t>(m * n) * sizeof(C)));
    C* bias = static_cast<C*>(bias_scratch);
    const std::array<int64_t, kMaxRank> row_major = {n, 1};
    Status broadcast = gather_as<C>(ctx, *self, shape, {row_major.data(), 2}, bias);
    if (!broadcast.ok()) return broadcast;
    for (int64_t i = 0; i < m * n; ++i) pc[i] = b * bias[i] + a * pc[i];
    return store_dense<C>(ctx, pc, *out);
  });
}

ET_REGISTER_KERNEL("aten::addmm.out", addmm_out);

}  // namespace
}  // namespace et::kernels
