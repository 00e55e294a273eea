// aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out)
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status permute_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(std::span<const int64_t> dims, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  const int rank = self->dim();
  if (static_cast<int>(dims.size()) != rank) {
    return ctx.fail(fmt::format("{} dims for a rank-{} tensor", dims.size(), rank));
  }
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  Shape shape;
  shape.rank = rank;
  std::array<int64_t, kMaxRank> in_strides{};
  std::array<bool, kMaxRank> seen{};
  for (int d = 0; d < rank; ++d) {
    int64_t src = dims[d] < 0 ? dims[d] + rank : dims[d];
    if (src < 0 || src >= rank || seen[src]) {
      return ctx.fail(fmt::format("dims are not a permutation of 0..{}", rank - 1));
    }
    seen[src] = true;
    shape.sizes[d] = self->size(static_cast<int>(src));
    in_strides[d] = self->stride(static_cast<int>(src));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  strided_copy(shape, self->data(), in_strides.data(), out->mutable_data(), out->strides().data(),
               self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::permute_copy.out", permute_copy_out);

}  // namespace
}  // namespace et::kernels
