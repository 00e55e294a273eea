// aten::sym_numel(Tensor self) -> SymInt
// Writes self's element count into the value that follows the argument.
#include "runtime/core/kernel.h"

namespace et::kernels {
namespace {

Status sym_numel(KernelContext& ctx) {
  // Only the shape is read: a tensor without memory (an unset output) is fine.
  if (ctx.num_args() < 2 || !ctx.arg(0).is_tensor()) return ctx.fail("argument 0 is not a tensor");
  const int64_t numel = ctx.arg(0).to_tensor().numel();
  ET_ASSIGN_OR_RETURN(Value * out, ctx.scalar_output(1));
  out->set_int(numel);
  return Status();
}

ET_REGISTER_KERNEL("aten::sym_numel", sym_numel);

}  // namespace
}  // namespace et::kernels
