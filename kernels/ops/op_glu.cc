// aten::glu.out(Tensor self, int dim=-1, *, Tensor(a!) out)
// Splits self in two halves a, b along dim: out = a * sigmoid(b). Floating types only.
#include <fmt/format.h>

#include <cmath>

#include "kernels/util/binary_op.h"
#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

template <typename C>
Status glu(const KernelContext& ctx, const Tensor& self, int dim, Tensor& out) {
  ET_ASSIGN_OR_RETURN(const C* in, dense_as<C>(ctx, self));
  ET_ASSIGN_OR_RETURN(C * dst, dense_result<C>(ctx, out));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= self.size(d);
  for (int d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  const int64_t half = self.size(dim) / 2;
  for (int64_t o = 0; o < outer; ++o) {
    const C* a = in + o * 2 * half * inner;
    const C* b = a + half * inner;
    C* r = dst + o * half * inner;
    for (int64_t i = 0; i < half * inner; ++i) r[i] = a[i] * (C(1) / (C(1) + std::exp(-b[i])));
  }
  return store_dense<C>(ctx, dst, out);
}

Status glu_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dim() == 0) return ctx.fail("glu does not support 0-d tensors");
  if (!is_floating(self->dtype())) return ctx.fail("glu needs a floating-point input");
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, self->dtype(), *out));
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  if (self->size(dim) % 2 != 0) {
    return ctx.fail(fmt::format("halving dimension must be even, but dimension {} is size {}", dim,
                                self->size(dim)));
  }
  Shape shape = shape_of(*self);
  shape.sizes[dim] /= 2;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  if (common == ScalarType::kDouble) return glu<double>(ctx, *self, dim, *out);
  return glu<float>(ctx, *self, dim, *out);
}

ET_REGISTER_KERNEL("aten::glu.out", glu_out);

}  // namespace
}  // namespace et::kernels
