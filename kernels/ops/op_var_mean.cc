// aten::var_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None,
//     bool keepdim=False, Tensor(a!) out0, Tensor(b!) out1)
// out0 the variance (correction 1 when None), out1 the mean: see
// kernels/util/scalar_variance.h.
#include "kernels/util/scalar_variance.h"

namespace et::kernels {
namespace {

Status var_mean_correction_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.optional_int_list_arg(1));
  ET_ASSIGN_OR_RETURN(auto correction, ctx.optional_scalar_arg(2));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * var, ctx.output(4));
  ET_ASSIGN_OR_RETURN(Tensor * mean, ctx.output(5));
  if (var->mutable_data() != nullptr && var->mutable_data() == mean->mutable_data()) {
    return ctx.fail("the variance and mean outputs share memory");
  }
  const double c = correction ? correction->to_double() : 1.0;
  return variance(ctx, *self, dims, c, keepdim, *var, mean);
}

ET_REGISTER_KERNEL("aten::var_mean.correction_out", var_mean_correction_out);

}  // namespace
}  // namespace et::kernels
