// Elementwise unary ops in PyTorch's semantics.
//
// unary_float_out: ops defined on real numbers (exp, sin, sigmoid, ...). Integer and
// bool inputs compute in float32 (PyTorch promotes them to the default dtype); half
// types compute in float; float64 in double. Called as `Status op(KernelContext&)`
// with arguments (self, ..., out); `out_index` says where out is.
//
// unary_same_out: ops that keep the input's type (neg, abs, relu, floor on integers).
#pragma once

#include <cmath>

#include "kernels/math/vector_math.h"
#include "kernels/util/binary_op.h"
#include "kernels/util/copy_util.h"
#include "runtime/core/thread_pool.h"

namespace et::kernels {

template <typename F>
Status unary_float_out(KernelContext& ctx, F&& f, size_t out_index = 1) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(out_index));
  const ScalarType result = is_floating(self->dtype()) ? self->dtype() : ScalarType::kFloat;
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, result, *out));
  if (common == ScalarType::kDouble) {
    return map_elementwise<double, double, 1>(ctx, {self}, *out, [&](double x) { return f(x); });
  }
  return map_elementwise<float, float, 1>(ctx, {self}, *out, [&](float x) { return f(x); });
}

// unary_float_out where float32 in and out of the same layout go through `array`, a
// vectorised function of vector_math.h, split across threads; f computes the rest.
template <typename F>
Status unary_float_array_out(KernelContext& ctx, void (*array)(const float*, float*, int64_t),
                             F&& f, size_t out_index = 1) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(out_index));
  if (self->dtype() == ScalarType::kFloat && out->dtype() == ScalarType::kFloat) {
    ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
    if (self->is_contiguous() && out->is_contiguous()) {
      const float* x = self->data_as<const float>();
      float* y = out->data_as<float>();
      ThreadPool::global().parallel_for(
          static_cast<size_t>(out->numel()), 16384, [&](size_t begin, size_t end) {
            array(x + begin, y + begin, static_cast<int64_t>(end - begin));
          });
      return Status();
    }
  }
  return unary_float_out(ctx, std::forward<F>(f), out_index);
}

// f is called with the compute type of the input's dtype (int64 for integers). Bool
// inputs are refused (as PyTorch does) unless kAllowBool.
template <bool kAllowBool = false, typename F>
Status unary_same_out(KernelContext& ctx, F&& f) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, self->dtype(), *out));
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    if constexpr (std::is_same_v<C, bool> && !kAllowBool) {
      return ctx.fail("bool input is not supported (as in PyTorch)");
    } else {
      return map_elementwise<C, C, 1>(ctx, {self}, *out, [&](C x) { return static_cast<C>(f(x)); });
    }
  });
}

}  // namespace et::kernels

// One file per op: ET_UNARY_FLOAT_OP(exp, "aten::exp.out", std::exp(x))
#define ET_UNARY_FLOAT_OP(name, op_name, expr)                                 \
  namespace et::kernels {                                                      \
  namespace {                                                                  \
  Status name##_out(KernelContext& ctx) {                                      \
    return unary_float_out(ctx, [](auto x) -> decltype(x) { return (expr); }); \
  }                                                                            \
  ET_REGISTER_KERNEL(op_name, name##_out);                                     \
  }                                                                            \
  }

// The same for an op with a vectorised float32 form in vector_math.h:
// ET_UNARY_FLOAT_ARRAY_OP(tanh, "aten::tanh.out", tanh_array, std::tanh(x))
#define ET_UNARY_FLOAT_ARRAY_OP(name, op_name, array, expr)                                 \
  namespace et::kernels {                                                                   \
  namespace {                                                                               \
  Status name##_out(KernelContext& ctx) {                                                   \
    return unary_float_array_out(ctx, array, [](auto x) -> decltype(x) { return (expr); }); \
  }                                                                                         \
  ET_REGISTER_KERNEL(op_name, name##_out);                                                  \
  }                                                                                         \
  }
