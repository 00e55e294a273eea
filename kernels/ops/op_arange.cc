// aten::arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out)
#include <fmt/format.h>

#include <cmath>

#include "kernels/util/convert.h"
#include "kernels/util/shape_util.h"

namespace et::kernels {
namespace {

Status arange_start_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(double start, ctx.double_arg(0));
  ET_ASSIGN_OR_RETURN(double end, ctx.double_arg(1));
  ET_ASSIGN_OR_RETURN(double step, ctx.double_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step) ||
      (step > 0 && end < start) || (step < 0 && end > start)) {
    return ctx.fail(fmt::format("arange({}, {}, {}) is not a valid range", start, end, step));
  }
  const double count = std::ceil((end - start) / step);
  if (count > 1e12) return ctx.fail("the range is too long");
  Shape shape;
  shape.rank = 1;
  shape.sizes[0] = static_cast<int64_t>(count);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  const bool ok = visit_dtype(out->dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* p = out->data_as<T>();
    for (int64_t i = 0; i < shape.sizes[0]; ++i)
      p[i] = convert_value<T>(start + static_cast<double>(i) * step);
  });
  return ok ? Status() : ctx.unsupported("dtype is not supported");
}

ET_REGISTER_KERNEL("aten::arange.start_out", arange_start_out);

}  // namespace
}  // namespace et::kernels
