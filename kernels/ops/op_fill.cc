// aten::fill.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out)
// aten::fill.Tensor_out(Tensor self, Tensor value, *, Tensor(a!) out)
// out takes self's shape, every element set to value converted to out's dtype. The
// Tensor form takes a 0-d value tensor (as PyTorch requires).
#include <fmt/format.h>

#include "kernels/util/copy_util.h"
#include "kernels/util/fill.h"

namespace et::kernels {
namespace {

Status fill_like(KernelContext& ctx, const Scalar& value) {
  // Only self's shape is read: a tensor without memory is fine.
  if (ctx.num_args() < 1 || !ctx.arg(0).is_tensor()) return ctx.fail("argument 0 is not a tensor");
  const Tensor& self = ctx.arg(0).to_tensor();
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(self)));
  return fill_with(ctx, *out, value);
}

Status fill_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(Scalar value, ctx.scalar_arg(1));
  return fill_like(ctx, value);
}

Status fill_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* value, ctx.input(1));
  if (value->dim() != 0) {
    return ctx.fail(
        fmt::format("the value must be a 0-d tensor, not one of {} dims", value->dim()));
  }
  Scalar s;
  const bool ok = visit_dtype(value->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = value->data_as<const T>()[0];
    if constexpr (std::is_same_v<T, Bool8>) {
      s.kind = ValueKind::kBool;
      s.b = static_cast<bool>(v);
    } else if constexpr (std::is_integral_v<T>) {
      s.kind = ValueKind::kInt;
      s.i = v;
    } else {
      s.kind = ValueKind::kDouble;
      s.d = convert_value<double>(v);
    }
  });
  if (!ok) {
    return ctx.unsupported(
        fmt::format("value dtype {} is not supported", scalar_type_name(value->dtype())));
  }
  return fill_like(ctx, s);
}

ET_REGISTER_KERNEL("aten::fill.Scalar_out", fill_scalar_out);
ET_REGISTER_KERNEL("aten::fill.Tensor_out", fill_tensor_out);

}  // namespace
}  // namespace et::kernels
