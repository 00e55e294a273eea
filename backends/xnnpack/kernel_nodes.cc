#include "backends/xnnpack/kernel_nodes.h"

#include <algorithm>

namespace et::xnn {
namespace {

bool all_fp32(const Graph& graph, const GraphNode& node) {
  return all_node_values(graph, node,
                         [](const GraphValue& v) { return v.dtype == DataType::kFp32; });
}

}  // namespace

bool kernel_runs(const Graph& graph, const GraphNode& node) {
  switch (node.type) {
    case NodeType::kStaticTranspose:
    case NodeType::kStaticSlice:
    case NodeType::kConcatenate2:
    case NodeType::kConcatenate3:
    case NodeType::kConcatenate4:
    case NodeType::kConcatenate5:
    case NodeType::kCopy:
      // Element-size generic, but a fused clamp needs floats.
      return !node.has_output_range() || all_fp32(graph, node);
    case NodeType::kTanh:
    case NodeType::kExp:
    case NodeType::kLog:
    case NodeType::kSin:
    case NodeType::kCos:
    case NodeType::kGelu:
    case NodeType::kReciprocalSquareRoot:
    case NodeType::kBatchMatrixMultiply:
    case NodeType::kScaledDotProductAttention:
      return all_fp32(graph, node);
    default:
      return false;
  }
}

void run_kernel_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  switch (node.type) {
    case NodeType::kBatchMatrixMultiply:
    case NodeType::kScaledDotProductAttention:
      run_matmul_node(graph, node, ptrs);
      break;
    case NodeType::kTanh:
    case NodeType::kExp:
    case NodeType::kLog:
    case NodeType::kSin:
    case NodeType::kCos:
    case NodeType::kGelu:
    case NodeType::kReciprocalSquareRoot:
      run_math_node(graph, node, ptrs);
      break;
    default:
      run_layout_node(graph, node, ptrs);
      break;
  }
  if (node.has_output_range()) {
    const uint32_t out = node.outputs[0];
    clamp_output(node, static_cast<float*>(ptrs[out]), graph.values[out].numel);
  }
}

void clamp_output(const GraphNode& node, float* data, size_t n) {
  for (size_t i = 0; i < n; ++i) data[i] = std::clamp(data[i], node.output_min, node.output_max);
}

}  // namespace et::xnn
