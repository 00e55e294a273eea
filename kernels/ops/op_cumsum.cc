// aten::cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out)
#include "kernels/util/along_dim.h"
#include "kernels/util/integer_math.h"

namespace et::kernels {
namespace {

Status cumsum_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  auto line = [](const auto* in, int64_t is, auto* o, int64_t os, int64_t n) {
    std::remove_cv_t<std::remove_pointer_t<decltype(o)>> acc = 0;
    for (int64_t i = 0; i < n; ++i) {
      acc = wrapping_add(acc, in[i * is]);
      o[i * os] = acc;
    }
  };
  if (is_floating(out->dtype())) return map_along_dim<double>(ctx, *self, dim, *out, line);
  return map_along_dim<int64_t>(ctx, *self, dim, *out, line);
}

ET_REGISTER_KERNEL("aten::cumsum.out", cumsum_out);

}  // namespace
}  // namespace et::kernels
