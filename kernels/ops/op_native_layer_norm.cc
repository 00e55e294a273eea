// aten::native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight,
//     Tensor? bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
// out0: the normalised input; out1, out2: the mean and 1/std of each normalised
// group, shaped like the input with the normalised dims set to one.
#include <fmt/format.h>

#include <algorithm>

#include "kernels/math/vector_math.h"
#include "kernels/util/dense.h"
#include "runtime/core/thread_pool.h"

namespace et::kernels {
namespace {

Status native_layer_norm_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto normalized, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(const Tensor* bias, ctx.optional_input(3));
  ET_ASSIGN_OR_RETURN(double eps, ctx.double_arg(4));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(5));
  ET_ASSIGN_OR_RETURN(Tensor * mean_out, ctx.output(6));
  ET_ASSIGN_OR_RETURN(Tensor * rstd_out, ctx.output(7));
  if (!is_floating(input->dtype())) return ctx.fail("layer norm needs a floating-point input");
  const int axis = input->dim() - static_cast<int>(normalized.size());
  if (axis < 0) return ctx.fail("normalized_shape has more dims than the input");
  int64_t inner = 1;
  for (size_t i = 0; i < normalized.size(); ++i) {
    if (input->size(axis + static_cast<int>(i)) != normalized[i]) {
      return ctx.fail(fmt::format("normalized_shape {} does not match the input's trailing dims {}",
                                  shape_string(normalized), shape_string(input->sizes())));
    }
    inner *= normalized[i];
  }
  for (const Tensor* t : {weight, bias}) {
    if (t && t->numel() != inner)
      return ctx.fail("weight and bias must have normalized_shape's size");
  }
  const int64_t outer = inner == 0 ? 0 : input->numel() / inner;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*input)));
  Shape stats = shape_of(*input);
  for (int d = axis; d < stats.rank; ++d) stats.sizes[d] = 1;
  ET_RETURN_IF_ERROR(resize_output(ctx, *mean_out, stats));
  ET_RETURN_IF_ERROR(resize_output(ctx, *rstd_out, stats));
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *input));
    ET_ASSIGN_OR_RETURN(const T* w, optional_dense_as<T>(ctx, weight));
    ET_ASSIGN_OR_RETURN(const T* b, optional_dense_as<T>(ctx, bias));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    ET_ASSIGN_OR_RETURN(T * means, dense_result<T>(ctx, *mean_out));
    ET_ASSIGN_OR_RETURN(T * rstds, dense_result<T>(ctx, *rstd_out));
    // Rows across threads (each row alone, so the split does not change a bit).
    const auto grain =
        static_cast<size_t>(std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)));
    ThreadPool::global().parallel_for(static_cast<size_t>(outer), grain, [&](size_t r0, size_t r1) {
      const auto first = static_cast<int64_t>(r0);
      layer_norm_rows(x + first * inner, static_cast<int64_t>(r1 - r0), inner, w, b, eps,
                      y + first * inner, means + first, rstds + first);
    });
    ET_RETURN_IF_ERROR(store_dense<T>(ctx, means, *mean_out));
    ET_RETURN_IF_ERROR(store_dense<T>(ctx, rstds, *rstd_out));
    return store_dense<T>(ctx, y, *out);
  };
  return input->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::native_layer_norm.out", native_layer_norm_out);

}  // namespace
}  // namespace et::kernels
