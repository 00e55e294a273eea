// aten::split_with_sizes_copy.out(Tensor self, SymInt[] split_sizes, int dim=0, *,
//     Tensor(a!)[] out) -> ()
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status split_with_sizes_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto split_sizes, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(auto outs, ctx.tensor_list_arg(3));
  if (self->dim() == 0) return ctx.fail("cannot split a 0-d tensor");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  if (split_sizes.size() != outs.size()) {
    return ctx.fail(fmt::format("{} split sizes for {} outputs", split_sizes.size(), outs.size()));
  }
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    if (s < 0) return ctx.fail(fmt::format("split size {} is negative", s));
    if (__builtin_add_overflow(total, s, &total)) return ctx.fail("split sizes overflow");
  }
  if (total != self->size(dim)) {
    return ctx.fail(fmt::format("split sizes add up to {}, but dim {} has size {}", total, dim,
                                self->size(dim)));
  }
  return copy_chunks(ctx, *self, dim, split_sizes, outs);
}

ET_REGISTER_KERNEL("aten::split_with_sizes_copy.out", split_with_sizes_copy_out);

}  // namespace
}  // namespace et::kernels
