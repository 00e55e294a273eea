// aten::split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *,
//     Tensor(a!)[] out) -> ()
// Chunks of split_size along dim, the last one smaller when the size does not divide.
#include <fmt/format.h>

#include <vector>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status split_copy_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t split_size, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(auto outs, ctx.tensor_list_arg(3));
  if (self->dim() == 0) return ctx.fail("cannot split a 0-d tensor");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  const int64_t n = self->size(dim);
  if (split_size < 0) return ctx.fail(fmt::format("split size {} is negative", split_size));
  if (split_size == 0 && n != 0) {
    return ctx.fail(fmt::format("split size can only be 0 if dim {} is empty, not {}", dim, n));
  }
  // split_size may be any int64: the count is taken without adding to it.
  const int64_t chunks =
      split_size == 0 ? 1 : std::max<int64_t>(1, n / split_size + (n % split_size != 0));
  if (static_cast<int64_t>(outs.size()) != chunks) {
    return ctx.fail(fmt::format("{} outputs for {} chunks", outs.size(), chunks));
  }
  std::vector<int64_t> sizes(outs.size());
  for (int64_t k = 0; k < chunks; ++k) sizes[k] = std::min(split_size, n - k * split_size);
  return copy_chunks(ctx, *self, dim, sizes, outs);
}

ET_REGISTER_KERNEL("aten::split_copy.Tensor_out", split_copy_tensor_out);

}  // namespace
}  // namespace et::kernels
