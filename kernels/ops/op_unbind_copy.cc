// aten::unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()
// out[i] = self.select(dim, i), one output per index of dim.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status unbind_copy_int_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(auto outs, ctx.tensor_list_arg(2));
  if (self->dim() == 0) return ctx.fail("cannot unbind a 0-d tensor");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, self->dim()));
  if (static_cast<int64_t>(outs.size()) != self->size(dim)) {
    return ctx.fail(
        fmt::format("{} outputs for dim {} of size {}", outs.size(), dim, self->size(dim)));
  }
  Shape shape;
  std::array<int64_t, kMaxRank> src_strides{};
  for (int d = 0; d < self->dim(); ++d) {
    if (d == dim) continue;
    src_strides[shape.rank] = self->stride(d);
    shape.sizes[shape.rank++] = self->size(d);
  }
  const int64_t elsize = static_cast<int64_t>(self->element_size());
  for (size_t k = 0; k < outs.size(); ++k) {
    Tensor* out = outs[k];
    if (out == nullptr || out->is_constant())
      return ctx.fail(fmt::format("output {} is not writable", k));
    if (out->dtype() != self->dtype()) return ctx.fail("input and output dtypes differ");
    ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
    if (out->numel() == 0) continue;
    if (out->data() == nullptr) return ctx.fail(fmt::format("output {} has no memory", k));
    const auto* src = static_cast<const uint8_t*>(self->data()) +
                      static_cast<int64_t>(k) * self->stride(dim) * elsize;
    strided_copy(shape, src, src_strides.data(), out->mutable_data(), out->strides().data(),
                 self->element_size());
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::unbind_copy.int_out", unbind_copy_int_out);

}  // namespace
}  // namespace et::kernels
