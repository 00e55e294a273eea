// aten::expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False, Tensor(a!) out)
// -1 keeps a dim's size; new leading dims may be added.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status expand_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto sizes, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  const int rank = static_cast<int>(sizes.size());
  if (rank < self->dim() || rank > kMaxRank) {
    return ctx.fail(fmt::format("cannot expand shape {} to {}", shape_string(self->sizes()),
                                shape_string(sizes)));
  }
  Shape shape;
  shape.rank = rank;
  const int lead = rank - self->dim();
  for (int d = 0; d < rank; ++d) {
    const int64_t have = d >= lead ? self->size(d - lead) : 1;
    const int64_t want = sizes[d] == -1 && d >= lead ? have : sizes[d];
    if (want < 0 || (have != 1 && have != want)) {
      return ctx.fail(fmt::format("cannot expand shape {} to {}", shape_string(self->sizes()),
                                  shape_string(sizes)));
    }
    shape.sizes[d] = want;
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  const auto src_strides = broadcast_strides(*self, rank);
  strided_copy(shape, self->data(), src_strides.data(), out->mutable_data(), out->strides().data(),
               self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::expand_copy.out", expand_copy_out);

}  // namespace
}  // namespace et::kernels
