// aten::_pdist_forward.out(Tensor self, float p=2., *, Tensor(a!) out)
// The p-norm distance between every pair of rows i < j of a 2-d input, in row-major
// pair order: out has N * (N - 1) / 2 values. p = 0 counts differing coordinates,
// p = inf takes the largest difference.
#include <fmt/format.h>

#include <cmath>

#include "kernels/util/dense.h"
#include "kernels/util/p_distance.h"

namespace et::kernels {
namespace {

Status pdist_forward_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(double p, ctx.double_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dim() != 2) return ctx.fail("needs a 2-d input");
  if (!(p >= 0)) return ctx.fail("p must be a non-negative number");
  if (self->dtype() != ScalarType::kFloat && self->dtype() != ScalarType::kDouble) {
    return ctx.fail(fmt::format("dtype {} is not supported by PyTorch for this op",
                                scalar_type_name(self->dtype())));
  }
  const int64_t n = self->size(0), m = self->size(1);
  const int64_t pairs = n > 1 ? n * (n - 1) / 2 : 0;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{pairs}, 1}));
  if (pairs == 0) return Status();
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *self));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) y[k++] = p_distance(x + i * m, x + j * m, m, p);
    }
    return store_dense<T>(ctx, y, *out);
  };
  return self->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::_pdist_forward.out", pdist_forward_out);

}  // namespace
}  // namespace et::kernels
