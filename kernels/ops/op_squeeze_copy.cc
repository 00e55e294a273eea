// aten::squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out)
// aten::squeeze_copy.dim_out(Tensor self, int dim, *, Tensor(a!) out)
// aten::squeeze_copy.out(Tensor self, *, Tensor(a!) out)
// Drops the named (or all) dims of size one; other named dims are kept, as in PyTorch.
#include <array>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status squeeze(KernelContext& ctx, const Tensor& self, std::array<bool, kMaxRank> drop,
               size_t out_arg) {
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(out_arg));
  if (self.dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  Shape shape;
  for (int d = 0; d < self.dim(); ++d) {
    if (drop[d] && self.size(d) == 1) continue;
    shape.sizes[shape.rank++] = self.size(d);
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  return copy_logical(ctx, self, *out);
}

Status squeeze_dims_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.int_list_arg(1));
  std::array<bool, kMaxRank> drop{};
  for (int64_t d : dims) {
    ET_ASSIGN_OR_RETURN(int w, wrap_dim(ctx, d, self->dim()));
    if (self->dim() > 0) drop[w] = true;
  }
  return squeeze(ctx, *self, drop, 2);
}

Status squeeze_dim_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t d, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(int w, wrap_dim(ctx, d, self->dim()));
  std::array<bool, kMaxRank> drop{};
  if (self->dim() > 0) drop[w] = true;
  return squeeze(ctx, *self, drop, 2);
}

Status squeeze_all_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  std::array<bool, kMaxRank> drop{};
  drop.fill(true);
  return squeeze(ctx, *self, drop, 1);
}

ET_REGISTER_KERNEL("aten::squeeze_copy.dims_out", squeeze_dims_out);
ET_REGISTER_KERNEL("aten::squeeze_copy.dim_out", squeeze_dim_out);
ET_REGISTER_KERNEL("aten::squeeze_copy.out", squeeze_all_out);

}  // namespace
}  // namespace et::kernels
