// aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out)
// Advanced indexing with integer index tensors on leading or separated dims: the
// index tensors broadcast together; their shape replaces the indexed dims (in place
// when the indexed dims are adjacent, at the front otherwise), as in NumPy/PyTorch.
// Bool mask indices are not supported (their output shape depends on the data).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/index_util.h"

namespace et::kernels {
namespace {

Status index_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto list, ctx.tensor_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (static_cast<int>(list.size()) > self->dim())
    return ctx.fail("too many indices for the tensor");
  // Which dims are indexed, and the broadcast shape of the index tensors.
  std::vector<int> dims;
  std::vector<const Tensor*> idx_tensors;
  for (size_t d = 0; d < list.size(); ++d) {
    if (list[d] == nullptr) continue;
    if (list[d]->dtype() == ScalarType::kBool || list[d]->dtype() == ScalarType::kByte) {
      return ctx.unsupported("boolean mask indices");
    }
    dims.push_back(static_cast<int>(d));
    idx_tensors.push_back(list[d]);
  }
  if (dims.empty()) return copy_logical(ctx, *self, *out);
  Shape ishape = shape_of(*idx_tensors[0]);
  for (size_t k = 1; k < idx_tensors.size(); ++k) {
    const Tensor& t = *idx_tensors[k];
    Shape next;
    next.rank = std::max(ishape.rank, t.dim());
    for (int d = 0; d < next.rank; ++d) {
      const int a = d - (next.rank - ishape.rank), b = d - (next.rank - t.dim());
      const int64_t sa = a >= 0 ? ishape.sizes[a] : 1, sb = b >= 0 ? t.size(b) : 1;
      if (sa != sb && sa != 1 && sb != 1)
        return ctx.fail("index tensors do not broadcast together");
      next.sizes[d] = sa == 1 ? sb : sa;
    }
    ishape = next;
  }
  bool adjacent = true;
  for (size_t k = 1; k < dims.size(); ++k) adjacent &= dims[k] == dims[k - 1] + 1;
  // Output shape: [before..., index shape..., after...] or [index shape..., rest...].
  Shape shape;
  std::vector<int> rest;  // self dims that are not indexed, in order
  for (int d = 0; d < self->dim(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) rest.push_back(d);
  }
  const int insert_at = adjacent ? dims[0] : 0;
  int r = 0;
  for (; r < static_cast<int>(rest.size()) && rest[r] < insert_at; ++r)
    shape.sizes[shape.rank++] = self->size(rest[r]);
  const int index_start = shape.rank;
  if (shape.rank + ishape.rank + static_cast<int>(rest.size()) - r > kMaxRank)
    return ctx.fail("result rank above 16");
  for (int d = 0; d < ishape.rank; ++d) shape.sizes[shape.rank++] = ishape.sizes[d];
  for (; r < static_cast<int>(rest.size()); ++r) shape.sizes[shape.rank++] = self->size(rest[r]);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  // Each index tensor broadcast to the index shape, as checked int64.
  int64_t icount = 1;
  for (int d = 0; d < ishape.rank; ++d) icount *= ishape.sizes[d];
  std::vector<std::vector<int64_t>> expanded;
  for (size_t k = 0; k < dims.size(); ++k) {
    ET_ASSIGN_OR_RETURN(const int64_t* idx,
                        checked_indices(ctx, *idx_tensors[k], self->size(dims[k])));
    const auto bstrides = broadcast_strides(*idx_tensors[k], ishape.rank);
    // Strides of the index tensor in its own row-major copy.
    const std::array<int64_t, kMaxRank> own = row_major_strides(shape_of(*idx_tensors[k]));
    std::array<int64_t, kMaxRank> src{};
    const int lead = ishape.rank - idx_tensors[k]->dim();
    for (int d = 0; d < idx_tensors[k]->dim(); ++d)
      src[lead + d] = bstrides[lead + d] == 0 ? 0 : own[d];
    std::vector<int64_t> values(static_cast<size_t>(icount));
    const std::array<int64_t, kMaxRank> dense = row_major_strides(ishape);
    const std::array<const int64_t*, 2> strides = {src.data(), dense.data()};
    for_each_index<2>(ishape, strides,
                      [&](const std::array<int64_t, 2>& o) { values[o[1]] = idx[o[0]]; });
    expanded.push_back(std::move(values));
  }
  // Walk the output; map each position to an input element.
  const int64_t elsize = static_cast<int64_t>(self->element_size());
  const auto* in = static_cast<const uint8_t*>(self->data());
  auto* o = static_cast<uint8_t*>(out->mutable_data());
  std::array<int64_t, kMaxRank> pos{};
  for (int64_t n = 0; n < out->numel(); ++n) {
    int64_t flat_index = 0;
    for (int d = 0; d < ishape.rank; ++d)
      flat_index = flat_index * ishape.sizes[d] + pos[index_start + d];
    int64_t src_offset = 0, dst_offset = 0;
    for (size_t k = 0; k < dims.size(); ++k)
      src_offset += expanded[k][static_cast<size_t>(flat_index)] * self->stride(dims[k]);
    int od = 0;
    for (size_t rr = 0; rr < rest.size(); ++rr) {
      if (od == index_start) od += ishape.rank;
      src_offset += pos[od] * self->stride(rest[rr]);
      ++od;
    }
    for (int d = 0; d < shape.rank; ++d) dst_offset += pos[d] * out->stride(d);
    std::memcpy(o + dst_offset * elsize, in + src_offset * elsize, static_cast<size_t>(elsize));
    for (int d = shape.rank - 1; d >= 0; --d) {
      if (++pos[d] < shape.sizes[d]) break;
      pos[d] = 0;
    }
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::index.Tensor_out", index_tensor_out);

}  // namespace
}  // namespace et::kernels
