// aten::full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None,
//     Tensor(a!) out)
#include "kernels/util/copy_util.h"
#include "kernels/util/fill.h"

namespace et::kernels {
namespace {

Status full_like_out(KernelContext& ctx) {
  if (ctx.num_args() < 1 || !ctx.arg(0).is_tensor()) return ctx.fail("argument 0 is not a tensor");
  const Tensor& self = ctx.arg(0).to_tensor();  // only its shape is read
  ET_ASSIGN_OR_RETURN(Scalar value, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(self)));
  return fill_with(ctx, *out, value);
}

ET_REGISTER_KERNEL("aten::full_like.out", full_like_out);

}  // namespace
}  // namespace et::kernels
