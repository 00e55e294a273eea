// aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1,
//                 Scalar alpha=1, Tensor(a!) out)
// out = beta * self + alpha * (mat1 @ mat2), self broadcast to [m, n].
#include <fmt/format.h>

#include <vector>

#include "kernels/dispatch.h"
#include "kernels/shape_util.h"

namespace et::kernels {
namespace {

Status addmm_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* mat1, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* mat2, ctx.input(2));
  ET_ASSIGN_OR_RETURN(Scalar beta, ctx.scalar_arg(3));
  ET_ASSIGN_OR_RETURN(Scalar alpha, ctx.scalar_arg(4));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(5));
  if (mat1->dim() != 2 || mat2->dim() != 2 || mat1->size(1) != mat2->size(0)) {
    return ctx.fail(fmt::format("cannot multiply {} by {}", shape_string(mat1->sizes()),
                                shape_string(mat2->sizes())));
  }
  for (const Tensor* t : {self, mat1, mat2}) {
    if (t->dtype() != out->dtype()) return ctx.fail("all tensors must have the output's dtype");
  }
  const int64_t m = mat1->size(0), k = mat1->size(1), n = mat2->size(1);
  Shape shape;
  shape.rank = 2;
  shape.sizes[0] = m;
  shape.sizes[1] = n;
  if (self->dim() > 2 ||
      (self->dim() >= 1 && self->size(self->dim() - 1) != n && self->size(self->dim() - 1) != 1) ||
      (self->dim() == 2 && self->size(0) != m && self->size(0) != 1)) {
    return ctx.fail(fmt::format("self of shape {} does not broadcast to [{}, {}]",
                                shape_string(self->sizes()), m, n));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  const auto bias_strides = broadcast_strides(*self, 2);
  return dispatch_float(ctx, out->dtype(), [&](auto zero) -> Status {
    using T = decltype(zero);
    const T* a = mat1->data_as<const T>();
    const T* b = mat2->data_as<const T>();
    const T* c = self->data_as<const T>();
    T* o = out->data_as<T>();
    const int64_t as0 = mat1->stride(0), as1 = mat1->stride(1);
    const int64_t bs0 = mat2->stride(0), bs1 = mat2->stride(1);
    const int64_t os0 = out->stride(0), os1 = out->stride(1);
    const T tb = static_cast<T>(beta.to_double()), ta = static_cast<T>(alpha.to_double());
    std::vector<T> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), zero);
      for (int64_t p = 0; p < k; ++p) {
        const T x = a[i * as0 + p * as1];
        const T* brow = b + p * bs0;
        for (int64_t j = 0; j < n; ++j) row[j] += x * brow[j * bs1];
      }
      for (int64_t j = 0; j < n; ++j) {
        const T bias = c[i * bias_strides[0] + j * bias_strides[1]];
        o[i * os0 + j * os1] = (tb == T(0) ? T(0) : tb * bias) + ta * row[j];
      }
    }
    return Status();
  });
}

ET_REGISTER_KERNEL("aten::addmm.out", addmm_out);

}  // namespace
}  // namespace et::kernels
