// Batch matrix multiply, scaled dot-product attention, and float32 FullyConnected on
// filters packed once.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/xnnpack/kernel_nodes.h"
#include "backends/xnnpack/shapes.h"
#include "kernels/math/packed_sgemm.h"
#include "kernels/math/sgemm.h"

namespace et::xnn {
namespace {

constexpr uint32_t kTransposeB = 0x1;

size_t product(std::span<const size_t> dims) {
  size_t n = 1;
  for (size_t d : dims) n *= d;
  return n;
}

// Offset (in matrices) of batch `index` of an input with batch dims `dims`,
// broadcast to `out` batch dims (both right-aligned).
size_t broadcast_offset(size_t index, std::span<const size_t> out, std::span<const size_t> dims) {
  size_t offset = 0, stride = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t od = out[out.size() - 1 - i];
    const size_t coord = index % od;
    index /= od;
    if (i < dims.size()) {
      const size_t d = dims[dims.size() - 1 - i];
      if (d != 1) offset += coord * stride;
      stride *= d;
    }
  }
  return offset;
}

void batch_matmul(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  const auto& a_dims = graph.values[node.inputs[0]].dims;
  const auto& b_dims = graph.values[node.inputs[1]].dims;
  const auto& y_dims = graph.values[node.outputs[0]].dims;
  const auto* a = static_cast<const float*>(ptrs[node.inputs[0]]);
  const auto* b = static_cast<const float*>(ptrs[node.inputs[1]]);
  auto* y = static_cast<float*>(ptrs[node.outputs[0]]);
  const size_t m = a_dims[a_dims.size() - 2], k = a_dims.back(), n = y_dims.back();
  const std::span<const size_t> a_batch(a_dims.data(), a_dims.size() - 2);
  const std::span<const size_t> b_batch(b_dims.data(), b_dims.size() - 2);
  const std::span<const size_t> y_batch(y_dims.data(), y_dims.size() - 2);
  // b is [..., K, N], or [..., N, K] with the transpose flag: sgemm reads either layout.
  const bool tb = node.flags & kTransposeB;
  for (size_t i = 0, batches = product(y_batch); i < batches; ++i) {
    const float* a_i = a + broadcast_offset(i, y_batch, a_batch) * m * k;
    const float* b_i = b + broadcast_offset(i, y_batch, b_batch) * k * n;
    kernels::parallel_sgemm({static_cast<int64_t>(m), static_cast<int64_t>(n),
                             static_cast<int64_t>(k), a_i, static_cast<int64_t>(k), b_i,
                             static_cast<int64_t>(tb ? k : n), tb, y + i * m * n,
                             static_cast<int64_t>(n), false});
  }
}

// out = softmax((q * scale) k^T + mask) v, per batch.
void attention(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  const auto& q_dims = graph.values[node.inputs[0]].dims;
  const auto& k_dims = graph.values[node.inputs[1]].dims;
  const auto& v_dims = graph.values[node.inputs[2]].dims;
  const size_t r = q_dims.size();
  const size_t t = q_dims[r - 2], d = q_dims[r - 1], s = k_dims[r - 2], dv = v_dims[r - 1];
  const size_t batches = product({q_dims.data(), r - 2});
  const auto* q = static_cast<const float*>(ptrs[node.inputs[0]]);
  const auto* k = static_cast<const float*>(ptrs[node.inputs[1]]);
  const auto* v = static_cast<const float*>(ptrs[node.inputs[2]]);
  const auto* scale = static_cast<const float*>(ptrs[node.inputs[3]]);
  const float* mask =
      node.inputs[4] == kNoValue ? nullptr : static_cast<const float*>(ptrs[node.inputs[4]]);
  auto* out = static_cast<float*>(ptrs[node.outputs[0]]);
  std::vector<float> qs(t * d), scores(t * s);
  for (size_t b = 0; b < batches; ++b) {
    const float* qb = q + b * t * d;
    for (size_t i = 0; i < t; ++i) {
      for (size_t c = 0; c < d; ++c) qs[i * d + c] = qb[i * d + c] * scale[c];
    }
    // scores = qs k^T: k's rows [s, d] are B transposed.
    kernels::sgemm({static_cast<int64_t>(t), static_cast<int64_t>(s), static_cast<int64_t>(d),
                    qs.data(), static_cast<int64_t>(d), k + b * s * d, static_cast<int64_t>(d),
                    true, scores.data(), static_cast<int64_t>(s), false});
    for (size_t i = 0; i < t; ++i) {
      float* row = scores.data() + i * s;
      if (mask) {
        for (size_t j = 0; j < s; ++j) row[j] += mask[i * s + j];
      }
      const float peak = *std::max_element(row, row + s);
      float sum = 0;
      for (size_t j = 0; j < s; ++j) sum += row[j] = std::exp(row[j] - peak);
      for (size_t j = 0; j < s; ++j) row[j] /= sum;
    }
    kernels::sgemm({static_cast<int64_t>(t), static_cast<int64_t>(dv), static_cast<int64_t>(s),
                    scores.data(), static_cast<int64_t>(s), v + b * s * dv,
                    static_cast<int64_t>(dv), false, out + b * t * dv, static_cast<int64_t>(dv),
                    false});
  }
}

// y = x W^T + bias over x's rows (its leading dims flattened), W packed beforehand.
void fully_connected(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  const kernels::PackedWeights& w = *graph.values[node.inputs[1]].packed;
  const GraphValue& x = graph.values[node.inputs[0]];
  const auto rows = static_cast<int64_t>(x.numel / x.dims.back());
  const float* bias =
      node.inputs[2] == kNoValue ? nullptr : static_cast<const float*>(ptrs[node.inputs[2]]);
  kernels::packed_sgemm(rows, static_cast<const float*>(ptrs[node.inputs[0]]), w.k, w, bias,
                        static_cast<float*>(ptrs[node.outputs[0]]), w.n);
}

}  // namespace

void pack_fully_connected_filter(Graph& graph, const GraphNode& node) {
  if (node.type != NodeType::kFullyConnected) return;
  const bool fp32 =
      all_node_values(graph, node, [](const GraphValue& v) { return v.dtype == DataType::kFp32; });
  GraphValue& filter = graph.values[node.inputs[1]];
  if (!fp32 || filter.packed || filter.numel == 0) return;
  // check_node: a constant 2-D filter, [N, K] or [K, N] with the transpose flag.
  const bool k_by_n = node.flags & kTransposeB;
  const auto n = static_cast<int64_t>(filter.dims[k_by_n ? 1 : 0]);
  const auto k = static_cast<int64_t>(filter.dims[k_by_n ? 0 : 1]);
  kernels::PackedWeights packed =
      kernels::pack_weights(static_cast<const float*>(filter.data), n, k, k_by_n);
  const size_t bytes = packed.bytes();
  filter.packed = share_counted(std::move(packed), bytes);
}

bool fully_connected_packed(const Graph& graph, const GraphNode& node) {
  return node.type == NodeType::kFullyConnected && graph.values[node.inputs[1]].packed &&
         graph.values[node.inputs[0]].dtype == DataType::kFp32;
}

void run_matmul_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  if (node.type == NodeType::kBatchMatrixMultiply) {
    batch_matmul(graph, node, ptrs);
  } else if (node.type == NodeType::kFullyConnected) {
    fully_connected(graph, node, ptrs);
  } else {
    attention(graph, node, ptrs);
  }
}

}  // namespace et::xnn
