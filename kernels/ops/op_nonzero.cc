// aten::nonzero.out(Tensor self, *, Tensor(a!) out)
// The indices of self's nonzero elements (NaN counts as nonzero), one row each in
// row-major order: an int64 tensor [count, rank]. The output's size depends on the
// data: out is resized within its capacity.
#include <fmt/format.h>

#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status nonzero_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (out->dtype() != ScalarType::kLong) {
    return ctx.fail(
        fmt::format("the output must be int64, not {}", scalar_type_name(out->dtype())));
  }
  const Shape shape = shape_of(*self);
  const std::array<const int64_t*, 1> strides = {self->strides().data()};
  int64_t count = 0;
  const bool ok = visit_dtype(self->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = self->data_as<const T>();
    if (shape.rank == 0) {
      count = convert_value<bool>(p[0]);
      return;
    }
    for_each_index<1>(shape, strides, [&](const std::array<int64_t, 1>& i) {
      count += convert_value<bool>(p[i[0]]);
    });
  });
  if (!ok) {
    return ctx.unsupported(
        fmt::format("dtype {} is not supported", scalar_type_name(self->dtype())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{count, shape.rank}, 2}));
  if (count == 0 || shape.rank == 0) return Status();
  int64_t* o = out->data_as<int64_t>();
  const int64_t row_stride = out->stride(0), col_stride = out->stride(1);
  visit_dtype(self->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = self->data_as<const T>();
    std::array<int64_t, kMaxRank> pos{};
    int64_t row = 0;
    for (int64_t n = 0; n < self->numel(); ++n) {
      int64_t offset = 0;
      for (int d = 0; d < shape.rank; ++d) offset += pos[d] * self->stride(d);
      if (convert_value<bool>(p[offset])) {
        for (int d = 0; d < shape.rank; ++d) o[row * row_stride + d * col_stride] = pos[d];
        ++row;
      }
      for (int d = shape.rank - 1; d >= 0; --d) {
        if (++pos[d] < shape.sizes[d]) break;
        pos[d] = 0;
      }
    }
  });
  return Status();
}

ET_REGISTER_KERNEL("aten::nonzero.out", nonzero_out);

}  // namespace
}  // namespace et::kernels
