// aten::scalar_tensor.out(Scalar s, *, Tensor(a!) out)
#include "kernels/util/fill.h"
#include "kernels/util/shape_util.h"

namespace et::kernels {
namespace {

Status scalar_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(Scalar value, ctx.scalar_arg(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{}));
  return fill_with(ctx, *out, value);
}

ET_REGISTER_KERNEL("aten::scalar_tensor.out", scalar_tensor_out);

}  // namespace
}  // namespace et::kernels
