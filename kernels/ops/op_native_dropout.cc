// aten::native_dropout.out(Tensor input, float p, bool? train, *, Tensor(a!) out0,
//     Tensor(b!) out1)
// Evaluation (train=False): out0 is a copy of input and out1 (bool) is all true. In
// training (train True or None) only the deterministic cases of a floating input run:
// p == 0 gives the same as evaluation, p == 1 an all-false mask and input * 0 (NaN
// stays NaN, as in PyTorch). A random mask (0 < p < 1) is NotSupported.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"
#include "kernels/util/elementwise.h"
#include "kernels/util/fill.h"

namespace et::kernels {
namespace {

Status native_dropout_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(double p, ctx.double_arg(1));
  ET_ASSIGN_OR_RETURN(auto train_arg, ctx.optional_scalar_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  ET_ASSIGN_OR_RETURN(Tensor * mask, ctx.output(4));
  if (train_arg && train_arg->kind != ValueKind::kBool) return ctx.fail("train must be a bool");
  if (!(p >= 0 && p <= 1)) {
    return ctx.fail(fmt::format("dropout probability has to be between 0 and 1, but got {}", p));
  }
  if (mask->dtype() != ScalarType::kBool) return ctx.fail("the mask output must be bool");
  if (input->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  const bool train = !train_arg || train_arg->to_int() != 0;
  if (train && p > 0 && p < 1) {
    return ctx.unsupported(fmt::format("training-mode dropout with p={} (a random mask)", p));
  }
  if (train && !is_floating(input->dtype())) {
    return ctx.unsupported("training-mode dropout of a non-floating input");
  }
  const Shape shape = shape_of(*input);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  ET_RETURN_IF_ERROR(resize_output(ctx, *mask, shape));
  const bool keep = !(train && p == 1);
  Scalar value;
  value.kind = ValueKind::kBool;
  value.b = keep;
  ET_RETURN_IF_ERROR(fill_with(ctx, *mask, value));
  if (keep) return copy_logical(ctx, *input, *out);
  return dispatch_compute(ctx, input->dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    return map_elementwise<C, C, 1>(ctx, {input}, *out,
                                    [](C x) { return static_cast<C>(x * C(0)); });
  });
}

ET_REGISTER_KERNEL("aten::native_dropout.out", native_dropout_out);

}  // namespace
}  // namespace et::kernels
