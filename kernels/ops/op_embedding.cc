// aten::embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1,
//     bool scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out)
#include <cstring>

#include "kernels/util/index_util.h"

namespace et::kernels {
namespace {

Status embedding_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* indices, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(5));
  if (weight->dim() != 2) return ctx.fail("the embedding weight must be 2-d");
  if (out->dtype() != weight->dtype()) return ctx.fail("output and weight dtypes differ");
  if (indices->dim() + 1 > kMaxRank) return ctx.fail("indices have too many dims");
  ET_ASSIGN_OR_RETURN(const int64_t* idx, checked_indices(ctx, *indices, weight->size(0)));
  Shape shape = shape_of(*indices);
  shape.sizes[shape.rank++] = weight->size(1);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  const size_t row = static_cast<size_t>(weight->size(1)) * weight->element_size();
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(out->nbytes() + 1));
  auto* dst = static_cast<uint8_t*>(scratch);
  // The weight may be in any dim order: copy rows through its strides.
  const Shape one_row{{weight->size(1)}, 1};
  const int64_t dense_stride[1] = {1};
  for (int64_t i = 0; i < indices->numel(); ++i) {
    const auto* src = static_cast<const uint8_t*>(weight->data()) +
                      idx[i] * weight->stride(0) * static_cast<int64_t>(weight->element_size());
    strided_copy(one_row, src, &weight->strides()[1], dst + i * static_cast<int64_t>(row),
                 dense_stride, weight->element_size());
  }
  const std::array<int64_t, kMaxRank> row_major = row_major_strides(shape);
  if (out->numel() > 0) {
    strided_copy(shape, dst, row_major.data(), out->mutable_data(), out->strides().data(),
                 out->element_size());
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::embedding.out", embedding_out);

}  // namespace
}  // namespace et::kernels
