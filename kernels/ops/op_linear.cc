// aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out)
// out[..., n] = sum_k input[..., k] * weight[n, k] + bias, over any leading dims of
// input (none for a 1-d input); bias broadcasts to the output. Integer dtypes wrap, as
// PyTorch's do; bool is refused, as PyTorch refuses it.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status linear_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* bias, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (input->dim() < 1 || weight->dim() != 2 || input->size(input->dim() - 1) != weight->size(1)) {
    return ctx.fail(fmt::format("cannot apply a {} weight to a {} input",
                                shape_string(weight->sizes()), shape_string(input->sizes())));
  }
  if (weight->dtype() != input->dtype() || (bias && bias->dtype() != input->dtype()))
    return ctx.fail("input, weight and bias must have the same dtype");
  if (input->dtype() == ScalarType::kBool) return ctx.unsupported("bool operands");
  const int64_t k = weight->size(1), n = weight->size(0);
  Shape shape{{}, input->dim()};
  for (int d = 0; d + 1 < input->dim(); ++d) shape.sizes[d] = input->size(d);
  shape.sizes[input->dim() - 1] = n;
  int64_t m = 1;  // rows of the product
  for (int d = 0; d + 1 < input->dim(); ++d) m *= input->size(d);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  return dispatch_compute(ctx, input->dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    if constexpr (std::is_same_v<C, bool>) {
      return ctx.unsupported("bool operands");
    } else {
      // Integers multiply as uint64_t, which wraps exactly as two's complement does.
      using G = std::conditional_t<std::is_integral_v<C>, uint64_t, C>;
      ET_ASSIGN_OR_RETURN(const C* x, dense_as<C>(ctx, *input));
      ET_ASSIGN_OR_RETURN(const C* w, dense_as<C>(ctx, *weight));
      ET_ASSIGN_OR_RETURN(C * y, dense_result<C>(ctx, *out));
      const G* xg;
      const G* wg;
      G* yg;
      if constexpr (std::is_integral_v<C>) {
        ET_ASSIGN_OR_RETURN(void* xs, ctx.temp_product({m, std::max<int64_t>(k, 1)}, sizeof(G)));
        ET_ASSIGN_OR_RETURN(void* ws, ctx.temp_product({n, std::max<int64_t>(k, 1)}, sizeof(G)));
        ET_ASSIGN_OR_RETURN(void* ys, ctx.temp_product({m, n}, sizeof(G)));
        std::copy(x, x + m * k, static_cast<G*>(xs));
        std::copy(w, w + n * k, static_cast<G*>(ws));
        xg = static_cast<const G*>(xs);
        wg = static_cast<const G*>(ws);
        yg = static_cast<G*>(ys);
      } else {
        xg = x;
        wg = w;
        yg = y;
      }
      // The weight is [n, k] with k contiguous: dot products against its rows, no transpose.
      parallel_gemm_nt<G>(m, n, k, xg, k, wg, k, yg, n);
      if (bias) {
        ET_ASSIGN_OR_RETURN(void* b_scratch, ctx.temp_product({m, n}, sizeof(C)));
        C* b = static_cast<C*>(b_scratch);
        const std::array<int64_t, kMaxRank> row_major = row_major_strides(shape);
        ET_RETURN_IF_ERROR(gather_as<C>(ctx, *bias, shape,
                                        {row_major.data(), static_cast<size_t>(shape.rank)}, b));
        for (int64_t i = 0; i < m * n; ++i) yg[i] += static_cast<G>(b[i]);
      }
      if constexpr (std::is_integral_v<C>) {
        std::transform(yg, yg + m * n, y, [](G v) { return static_cast<C>(v); });
      }
      return store_dense<C>(ctx, y, *out);
    }
  });
}

ET_REGISTER_KERNEL("aten::linear.out", linear_out);

}  // namespace
}  // namespace et::kernels
