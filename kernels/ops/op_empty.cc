// aten::empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out)
// out takes `size`; its layout is the program's (memory_format only asked for it). The
// values are unspecified: zero_fill (kernels/util/scalar_creation.h) writes zeroes.
#include "kernels/util/scalar_creation.h"

namespace et::kernels {
namespace {

Status empty_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(auto sizes, ctx.int_list_arg(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  ET_RETURN_IF_ERROR(resize_to_sizes(ctx, *out, sizes));
  return zero_fill(*out);
}

ET_REGISTER_KERNEL("aten::empty.out", empty_out);

}  // namespace
}  // namespace et::kernels
