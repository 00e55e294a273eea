#include "kernels/util/shape_util.h"

#include <fmt/format.h>

namespace et::kernels {

std::array<int64_t, kMaxRank> row_major_strides(const Shape& shape) {
  std::array<int64_t, kMaxRank> strides{};
  int64_t stride = 1;
  for (int d = shape.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape.sizes[d];
  }
  return strides;
}

Result<Shape> broadcast_shapes(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  Shape out;
  out.rank = std::max(a.dim(), b.dim());
  for (int d = 0; d < out.rank; ++d) {
    const int da = d - (out.rank - a.dim());
    const int db = d - (out.rank - b.dim());
    const int64_t sa = da >= 0 ? a.size(da) : 1;
    const int64_t sb = db >= 0 ? b.size(db) : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      return ctx.fail(fmt::format("shapes {} and {} cannot be broadcast together",
                                  shape_string(a.sizes()), shape_string(b.sizes())));
    }
    out.sizes[d] = sa == 1 ? sb : sa;
  }
  return out;
}

std::array<int64_t, kMaxRank> broadcast_strides(const Tensor& t, int out_rank) {
  std::array<int64_t, kMaxRank> s{};
  const int lead = out_rank - t.dim();
  for (int d = 0; d < t.dim(); ++d) s[lead + d] = t.size(d) == 1 ? 0 : t.stride(d);
  return s;
}

Status resize_output(const KernelContext& ctx, Tensor& out, const Shape& shape) {
  Status s = out.resize(shape.view());
  if (!s.ok()) return ctx.fail(fmt::format("output: {}", s.message()));
  return Status();
}

}  // namespace et::kernels
