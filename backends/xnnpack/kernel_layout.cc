// Layout nodes: transpose, slice, concatenate, copy. They move elements of any size.
#include <cstring>

#include "backends/xnnpack/kernel_nodes.h"

namespace et::xnn {
namespace {

std::vector<size_t> row_major_strides(const std::vector<size_t>& dims) {
  std::vector<size_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// out[i0..] = in[offset + sum(i_d * in_strides[d])] over out_dims, in bytes of `esize`.
void gather(const uint8_t* in, size_t offset, const std::vector<size_t>& in_strides,
            const std::vector<size_t>& out_dims, uint8_t* out, size_t esize) {
  const size_t rank = out_dims.size();
  if (rank == 0) {
    std::memcpy(out, in + offset * esize, esize);
    return;
  }
  const size_t inner = out_dims[rank - 1], inner_stride = in_strides[rank - 1];
  std::vector<size_t> index(rank, 0);
  size_t outer = 1;
  for (size_t d = 0; d + 1 < rank; ++d) outer *= out_dims[d];
  for (size_t o = 0; o < outer; ++o) {
    size_t src = offset;
    for (size_t d = 0; d + 1 < rank; ++d) src += index[d] * in_strides[d];
    if (inner_stride == 1) {
      std::memcpy(out, in + src * esize, inner * esize);
      out += inner * esize;
    } else {
      for (size_t i = 0; i < inner; ++i, out += esize) {
        std::memcpy(out, in + (src + i * inner_stride) * esize, esize);
      }
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < out_dims[d]) break;
      index[d] = 0;
    }
  }
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
      const std::vector<size_t> strides = row_major_strides(x.dims);
      std::vector<size_t> permuted(strides.size());
      for (size_t d = 0; d < strides.size(); ++d) permuted[d] = strides[node.list[d]];
      gather(in, 0, permuted, y.dims, out, esize);
      return;
    }
    case NodeType::kStaticSlice: {
      const std::vector<size_t> strides = row_major_strides(x.dims);
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
          std::memcpy(out + o * row + column, src + o * chunk, chunk);
        column += chunk;
      }
      return;
    }
    default:  // Copy (and anything that only moves bytes)
      if (out != in) std::memmove(out, in, y.nbytes());
      return;
  }
}

}  // namespace et::xnn
