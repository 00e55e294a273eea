// Advanced indexing (`self[i0, :, mask, i3]`, the Tensor?[] indices of aten::index and
// aten::index_put): which elements of `self` the indices select, in the order of the
// result, as PyTorch and NumPy define it.
//
// - None leaves its dim whole; dims past the end of the list are left whole too.
// - Integer index tensors (int64 or int32, negative from the end) broadcast together;
//   their broadcast shape replaces the indexed dims: in place when the indexed dims
//   are adjacent, at the front of the result otherwise.
// - A bool (or uint8) mask of rank k covers k dims, whose sizes it must equal, and
//   stands for the k index tensors of its true positions (as mask.nonzero()).
#pragma once

#include <span>

#include "kernels/util/shape_util.h"
#include "runtime/core/kernel.h"

namespace et::kernels {

struct AdvancedIndex {
  Shape result;  // the shape of self[indices]
  // For each element of the result in row-major order, the offset (in elements) of
  // the element it selects, by the strides given to plan_advanced_index(). In the
  // context's temp memory: valid until the kernel returns.
  const int64_t* offsets = nullptr;
};

// Plans `self[indices]` for a tensor of self's shape laid out with `strides` (self's
// own, or those of an output of the same shape). Every index is checked against its
// dim. InvalidArgument naming the op for indices that are out of range, do not
// broadcast, exceed self's rank or mismatch a mask's dims.
Result<AdvancedIndex> plan_advanced_index(const KernelContext& ctx, const Tensor& self,
                                          std::span<Tensor* const> indices,
                                          std::span<const int64_t> strides);

}  // namespace et::kernels
