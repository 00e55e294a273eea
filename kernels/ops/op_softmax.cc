// aten::_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out)
#include <cmath>

#include "kernels/util/along_dim.h"

namespace et::kernels {
namespace {

template <typename C>
void softmax_line(const C* in, int64_t is, C* out, int64_t os, int64_t n) {
  C max = in[0];
  for (int64_t i = 1; i < n; ++i) max = std::max(max, in[i * is]);
  C sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const C e = std::exp(in[i * is] - max);
    out[i * os] = e;
    sum += e;
  }
  for (int64_t i = 0; i < n; ++i) out[i * os] /= sum;
}

Status softmax_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (!is_floating(self->dtype())) return ctx.fail("softmax needs a floating-point input");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  if (self->dtype() == ScalarType::kDouble)
    return map_along_dim<double>(ctx, *self, dim, *out, softmax_line<double>);
  return map_along_dim<float>(ctx, *self, dim, *out, softmax_line<float>);
}

ET_REGISTER_KERNEL("aten::_softmax.out", softmax_out);

}  // namespace
}  // namespace et::kernels
