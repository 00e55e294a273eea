// aten::var.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *,
//     Tensor(a!) out)
// var.correction_out with correction 1 (unbiased) or 0: see kernels/util/scalar_variance.h.
#include "kernels/util/scalar_variance.h"

namespace et::kernels {
namespace {

Status var_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.optional_int_list_arg(1));
  ET_ASSIGN_OR_RETURN(bool unbiased, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  return variance(ctx, *self, dims, unbiased ? 1.0 : 0.0, keepdim, *out, nullptr);
}

ET_REGISTER_KERNEL("aten::var.out", var_out);

}  // namespace
}  // namespace et::kernels
