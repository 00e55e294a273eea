// Layout nodes: transpose, slice, concatenate, copy. They move elements of any size.
#include <algorithm>
#include <array>
#include <cstring>

#include "backends/xnnpack/kernel_nodes.h"
#include "kernels/math/transpose.h"

namespace et::xnn {
namespace {

// At most kMaxDims sizes or strides, without the heap: a layout node runs on every
// execute, which allocates nothing once warm.
struct Dims {
  std::array<size_t, kMaxDims> v{};
  size_t n = 0;
  size_t size() const { return n; }
  size_t& operator[](size_t i) { return v[i]; }
  size_t operator[](size_t i) const { return v[i]; }
  void push_back(size_t x) { v[n++] = x; }
};

Dims row_major_strides(const std::vector<size_t>& dims) {
  Dims strides;
  strides.n = dims.size();
  for (size_t d = 0; d < dims.size(); ++d) strides[d] = 1;
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// out[i0..] = in[offset + sum(i_d * in_strides[d])] over out_dims, in bytes of `esize`.
void gather(const uint8_t* in, size_t offset, const Dims& in_strides,
            const std::vector<size_t>& out_dims, uint8_t* out, size_t esize) {
  const size_t rank = out_dims.size();
  if (rank == 0) {
    std::memmove(out, in + offset * esize, esize);
    return;
  }
  const size_t inner = out_dims[rank - 1], inner_stride = in_strides[rank - 1];
  std::array<size_t, kMaxDims> index{};
  size_t outer = 1;
  for (size_t d = 0; d + 1 < rank; ++d) outer *= out_dims[d];
  for (size_t o = 0; o < outer; ++o) {
    size_t src = offset;
    for (size_t d = 0; d + 1 < rank; ++d) src += index[d] * in_strides[d];
    if (inner_stride == 1) {
      std::memmove(out, in + src * esize, inner * esize);
      out += inner * esize;
    } else {
      for (size_t i = 0; i < inner; ++i, out += esize) {
        std::memmove(out, in + (src + i * inner_stride) * esize, esize);
      }
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < out_dims[d]) break;
      index[d] = 0;
    }
  }
}

// Dims of `dims` permuted by `perm` with runs of consecutive axes merged: the same
// transpose over fewer, larger dims (NCHW -> NHWC becomes [C, H*W] -> [H*W, C]).
void merge_axes(const std::vector<size_t>& dims, const std::vector<size_t>& perm, Dims& merged_dims,
                Dims& merged_perm) {
  // Groups of output positions whose input axes are consecutive: group g holds input
  // axes first[g] .. first[g] + count[g] - 1.
  std::array<size_t, kMaxDims> first{}, count{};
  size_t groups = 0;
  for (size_t d = 0; d < perm.size(); ++d) {
    if (dims[perm[d]] == 1) continue;  // size-1 axes move nothing
    if (groups > 0 && first[groups - 1] + count[groups - 1] == perm[d]) {
      ++count[groups - 1];
    } else {
      first[groups] = perm[d];
      count[groups] = 1;
      ++groups;
    }
  }
  // Number the groups by their first input axis to get the merged permutation.
  std::array<size_t, kMaxDims> order{};
  for (size_t g = 0; g < groups; ++g) order[g] = g;
  // At most kMaxDims groups: an insertion sort (std::sort's unrolled insertion over 16
  // elements trips GCC's -Warray-bounds on a 6-element array under -fsanitize=thread).
  for (size_t g = 1; g < groups; ++g) {
    for (size_t h = g; h > 0 && first[order[h]] < first[order[h - 1]]; --h) {
      std::swap(order[h], order[h - 1]);
    }
  }
  merged_dims.n = merged_perm.n = groups;
  for (size_t rank = 0; rank < groups; ++rank) {
    merged_dims[rank] = 1;
    const size_t g = order[rank];
    for (size_t axis = first[g]; axis < first[g] + count[g]; ++axis)
      merged_dims[rank] *= dims[axis];
    merged_perm[g] = rank;
  }
}

// A transpose that merges to a (batched) 2-D one; false when it does not.
bool fast_transpose(const std::vector<size_t>& dims, const std::vector<size_t>& perm,
                    const uint8_t* in, uint8_t* out, size_t esize) {
  Dims md, mp;
  merge_axes(dims, perm, md, mp);
  size_t batch = 1, rows = 0, cols = 0;
  if (mp.size() == 2 && mp[0] == 1 && mp[1] == 0) {
    rows = md[0];
    cols = md[1];
  } else if (mp.size() == 3 && mp[0] == 0 && mp[1] == 2 && mp[2] == 1) {
    batch = md[0];
    rows = md[1];
    cols = md[2];
  } else {
    return false;
  }
  const auto plane = static_cast<int64_t>(rows * cols * esize);
  for (size_t b = 0; b < batch; ++b, in += plane, out += plane) {
    if (!kernels::transpose_plane(in, static_cast<int64_t>(cols), out, static_cast<int64_t>(rows),
                                  static_cast<int64_t>(rows), static_cast<int64_t>(cols), esize)) {
      return false;
    }
  }
  return true;
}

}  // namespace

void run_layout_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  const GraphValue& x = graph.values[node.inputs[0]];
  const GraphValue& y = graph.values[node.outputs[0]];
  const size_t esize = data_type_size(y.dtype);
  auto* out = static_cast<uint8_t*>(ptrs[node.outputs[0]]);
  auto* in = static_cast<const uint8_t*>(ptrs[node.inputs[0]]);
  switch (node.type) {
    case NodeType::kStaticTranspose: {
      if (fast_transpose(x.dims, node.list, in, out, esize)) return;
      const Dims strides = row_major_strides(x.dims);
      Dims permuted;
      for (size_t d = 0; d < strides.size(); ++d) permuted.push_back(strides[node.list[d]]);
      gather(in, 0, permuted, y.dims, out, esize);
      return;
    }
    case NodeType::kStaticSlice: {
      const Dims strides = row_major_strides(x.dims);
      size_t offset = 0;
      for (size_t d = 0; d < strides.size(); ++d) offset += node.list[d] * strides[d];
      gather(in, offset, strides, y.dims, out, esize);
      return;
    }
    case NodeType::kConcatenate2:
    case NodeType::kConcatenate3:
    case NodeType::kConcatenate4:
    case NodeType::kConcatenate5: {
      const size_t axis = node.params[0];
      size_t outer = 1, inner = 1;
      for (size_t d = 0; d < axis; ++d) outer *= y.dims[d];
      for (size_t d = axis + 1; d < y.dims.size(); ++d) inner *= y.dims[d];
      const size_t row = y.dims[axis] * inner * esize;
      size_t column = 0;
      for (uint32_t id : node.inputs) {
        const size_t chunk = graph.values[id].dims[axis] * inner * esize;
        auto* src = static_cast<const uint8_t*>(ptrs[id]);
        for (size_t o = 0; o < outer; ++o)
          std::memmove(out + o * row + column, src + o * chunk, chunk);
        column += chunk;
      }
      return;
    }
    default:  // Copy (and anything that only moves bytes)
      // Planning checked one data type and shape; the smaller count is the safe one.
      if (out != in) std::memmove(out, in, std::min(x.nbytes(), y.nbytes()));
      return;
  }
}

}  // namespace et::xnn
