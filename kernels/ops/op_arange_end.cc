// aten::arange.out(Scalar end, *, Tensor(a!) out)
// 0, 1, ..., ceil(end) - 1 in out's dtype (arange.start_out with start 0, step 1).
#include <fmt/format.h>

#include <cmath>

#include "kernels/util/convert.h"
#include "kernels/util/shape_util.h"

namespace et::kernels {
namespace {

Status arange_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(double end, ctx.double_arg(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (!std::isfinite(end) || end < 0) {
    return ctx.fail(fmt::format("arange({}) is not a valid range", end));
  }
  const double count = std::ceil(end);
  if (count > 1e12) return ctx.fail("the range is too long");
  Shape shape;
  shape.rank = 1;
  shape.sizes[0] = static_cast<int64_t>(count);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  const bool ok = visit_dtype(out->dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* p = out->data_as<T>();
    for (int64_t i = 0; i < shape.sizes[0]; ++i) p[i] = convert_value<T>(static_cast<double>(i));
  });
  return ok ? Status() : ctx.unsupported("dtype is not supported");
}

ET_REGISTER_KERNEL("aten::arange.out", arange_out);

}  // namespace
}  // namespace et::kernels
