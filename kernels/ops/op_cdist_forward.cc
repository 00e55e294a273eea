// aten::_cdist_forward.out(Tensor x1, Tensor x2, float p, int? compute_mode, *,
//     Tensor(a!) out)
// out[..., i, j] = || x1[..., i, :] - x2[..., j, :] ||_p over broadcast batch dims:
// p = 0 counts differing coordinates, p = inf takes the largest difference. For p = 2,
// compute_mode 1 (or None with more than 25 rows on either side) uses PyTorch's matrix
// form sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0)); 2 (or None on small inputs) sums squares.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/util/dense.h"
#include "kernels/util/p_distance.h"

namespace et::kernels {
namespace {

Status cdist_forward_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* x1, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* x2, ctx.input(1));
  ET_ASSIGN_OR_RETURN(double p, ctx.double_arg(2));
  ET_ASSIGN_OR_RETURN(std::optional<int64_t> compute_mode, ctx.optional_int_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (x1->dim() < 2 || x2->dim() < 2 || x1->size(x1->dim() - 1) != x2->size(x2->dim() - 1)) {
    return ctx.fail(fmt::format("needs [..., P, M] and [..., R, M] inputs, got {} and {}",
                                shape_string(x1->sizes()), shape_string(x2->sizes())));
  }
  if (!(p >= 0)) return ctx.fail("p must be a non-negative number");
  const int64_t mode = compute_mode.value_or(0);
  if (mode < 0 || mode > 2) return ctx.fail(fmt::format("compute_mode {} is not 0, 1 or 2", mode));
  if (x1->dtype() != x2->dtype()) return ctx.fail("x1 and x2 must have the same dtype");
  if (x1->dtype() != ScalarType::kFloat && x1->dtype() != ScalarType::kDouble) {
    return ctx.fail(fmt::format("dtype {} is not supported by PyTorch for this op",
                                scalar_type_name(x1->dtype())));
  }
  // Batch dims broadcast like any elementwise op's.
  const int r1 = x1->dim() - 2, r2 = x2->dim() - 2, rank = std::max(r1, r2);
  Shape batch{{}, rank};
  for (int d = 0; d < rank; ++d) {
    const int64_t a = d - (rank - r1) >= 0 ? x1->size(d - (rank - r1)) : 1;
    const int64_t b = d - (rank - r2) >= 0 ? x2->size(d - (rank - r2)) : 1;
    if (a != b && a != 1 && b != 1) {
      return ctx.fail(fmt::format("batch dims of {} and {} do not broadcast",
                                  shape_string(x1->sizes()), shape_string(x2->sizes())));
    }
    batch.sizes[d] = a == 1 ? b : a;
  }
  const int64_t rows1 = x1->size(r1), rows2 = x2->size(r2), m = x1->size(r1 + 1);
  Shape out_shape = batch, s1 = batch, s2 = batch;
  out_shape.rank = s1.rank = s2.rank = rank + 2;
  out_shape.sizes[rank] = rows1, out_shape.sizes[rank + 1] = rows2;
  s1.sizes[rank] = rows1, s1.sizes[rank + 1] = m;
  s2.sizes[rank] = rows2, s2.sizes[rank + 1] = m;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, out_shape));
  if (out->numel() == 0) return Status();
  int64_t batches = 1;
  for (int d = 0; d < rank; ++d) batches *= batch.sizes[d];
  const bool use_mm = p == 2 && (mode == 1 || (mode == 0 && (rows1 > 25 || rows2 > 25)));
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    const int64_t width = std::max<int64_t>(m, 1);
    ET_ASSIGN_OR_RETURN(void* a_scratch, ctx.temp_product({batches, rows1, width}, sizeof(T)));
    ET_ASSIGN_OR_RETURN(void* b_scratch, ctx.temp_product({batches, rows2, width}, sizeof(T)));
    T* a = static_cast<T*>(a_scratch);
    T* b = static_cast<T*>(b_scratch);
    const auto st1 = row_major_strides(s1);
    const auto st2 = row_major_strides(s2);
    if (m > 0) {
      ET_RETURN_IF_ERROR(gather_as<T>(ctx, *x1, s1, {st1.data(), static_cast<size_t>(s1.rank)}, a));
      ET_RETURN_IF_ERROR(gather_as<T>(ctx, *x2, s2, {st2.data(), static_cast<size_t>(s2.rank)}, b));
    }
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    for (int64_t bi = 0; bi < batches; ++bi) {
      const T* ab = a + bi * rows1 * m;
      const T* bb = b + bi * rows2 * m;
      T* yb = y + bi * rows1 * rows2;
      for (int64_t i = 0; i < rows1; ++i) {
        for (int64_t j = 0; j < rows2; ++j) {
          const T* u = ab + i * m;
          const T* v = bb + j * m;
          if (use_mm) {
            // [-2u, |u|^2, 1] . [v, 1, |v|^2], clamped at 0, square-rooted.
            T nu(0), nv(0), acc(0);
            for (int64_t k = 0; k < m; ++k) nu += u[k] * u[k], nv += v[k] * v[k];
            for (int64_t k = 0; k < m; ++k) acc += (T(-2) * u[k]) * v[k];
            acc = acc + nu + nv;
            yb[i * rows2 + j] = std::sqrt(acc < T(0) ? T(0) : acc);
          } else {
            yb[i * rows2 + j] = p_distance(u, v, m, p);
          }
        }
      }
    }
    return store_dense<T>(ctx, y, *out);
  };
  return x1->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::_cdist_forward.out", cdist_forward_out);

}  // namespace
}  // namespace et::kernels
