// aten::sym_size.int(Tensor self, int dim) -> SymInt
// Writes the size into the Int value that follows the arguments.
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status sym_size_int(KernelContext& ctx) {
  // Only the shape is read: a tensor without memory (an unset output) is fine.
  if (ctx.num_args() < 3 || !ctx.arg(0).is_tensor()) return ctx.fail("argument 0 is not a tensor");
  const Tensor* self = &ctx.arg(0).to_tensor();
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t unused, ctx.int_arg(2));  // the result slot must be an Int
  (void)unused;
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  ctx.arg(2).set_int(self->dim() == 0 ? 1 : self->size(dim));
  return Status();
}

ET_REGISTER_KERNEL("aten::sym_size.int", sym_size_int);

}  // namespace
}  // namespace et::kernels
