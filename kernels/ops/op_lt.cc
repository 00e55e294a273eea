// aten::lt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::lt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
#include "kernels/util/binary_op.h"

namespace et::kernels {
namespace {

Status lt_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return compare_tensors(ctx, *self, *other, *out, [](auto x, auto y) { return x < y; });
}

Status lt_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar other, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return compare_scalar(ctx, *self, other, *out, [](auto x, auto y) { return x < y; });
}

ET_REGISTER_KERNEL("aten::lt.Tensor_out", lt_tensor_out);
ET_REGISTER_KERNEL("aten::lt.Scalar_out", lt_scalar_out);

}  // namespace
}  // namespace et::kernels
