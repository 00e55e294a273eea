#include "backends/xnnpack/kernel_nodes.h"

#include <algorithm>

namespace et::xnn {
namespace {

bool all_fp32(const Graph& graph, const GraphNode& node) {
  return all_node_values(graph, node,
                         [](const GraphValue& v) { return v.dtype == DataType::kFp32; });
}

bool quantized(DataType t) {
  switch (t) {
    case DataType::kFp32:
    case DataType::kFp16:
    case DataType::kBf16:
    case DataType::kInt32:
      return false;
    default:
      return true;
  }
}

// Layout nodes move bytes: right for quantized values only when every value the node
// touches shares one quantization (type, scale, zero point, per-channel scales). A
// qdint8 value's row parameters are not moved at all.
bool bytes_keep_meaning(const Graph& graph, const GraphNode& node) {
  const GraphValue& first = graph.values[node.outputs[0]];
  return all_node_values(graph, node, [&](const GraphValue& v) {
    if (v.is_int4() || first.is_int4()) return false;  // packed weights: no layout of bytes
    if (!quantized(v.dtype) && !quantized(first.dtype)) return true;
    return v.dtype != DataType::kQdInt8 && v.dtype == first.dtype && v.scale == first.scale &&
           v.zero_point == first.zero_point && v.channel_scales.empty() &&
           first.channel_scales.empty();
  });
}

}  // namespace

KernelFamily kernel_family(NodeType type) {
  switch (type) {
    case NodeType::kStaticTranspose:
    case NodeType::kStaticSlice:
    case NodeType::kConcatenate2:
    case NodeType::kConcatenate3:
    case NodeType::kConcatenate4:
    case NodeType::kConcatenate5:
    case NodeType::kCopy:
      return KernelFamily::kLayout;
    case NodeType::kTanh:
    case NodeType::kExp:
    case NodeType::kLog:
    case NodeType::kSin:
    case NodeType::kCos:
    case NodeType::kGelu:
    case NodeType::kReciprocalSquareRoot:
      return KernelFamily::kMath;
    case NodeType::kBatchMatrixMultiply:
    case NodeType::kScaledDotProductAttention:
      return KernelFamily::kMatmul;
    default:
      return KernelFamily::kNone;
  }
}

bool kernel_runs(const Graph& graph, const GraphNode& node) {
  switch (kernel_family(node.type)) {
    case KernelFamily::kLayout:
      // Element-size generic, but a fused clamp needs floats.
      return (!node.has_output_range() || all_fp32(graph, node)) && bytes_keep_meaning(graph, node);
    case KernelFamily::kMath:
    case KernelFamily::kMatmul:
      return all_fp32(graph, node);
    case KernelFamily::kNone:
      break;
  }
  if (node.type == NodeType::kFullyConnected) {
    return fully_connected_packed(graph, node) || quantized_runs(graph, node);
  }
  return node.type == NodeType::kConvert && quantized_runs(graph, node);
}

void run_kernel_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  switch (kernel_family(node.type)) {
    case KernelFamily::kLayout:
      run_layout_node(graph, node, ptrs);
      break;
    case KernelFamily::kMath:
      run_math_node(graph, node, ptrs);
      break;
    case KernelFamily::kMatmul:
      run_matmul_node(graph, node, ptrs);
      break;
    case KernelFamily::kNone:
      // FullyConnected (packed float32, or dynamically quantized) and Convert.
      if (fully_connected_packed(graph, node)) {
        run_matmul_node(graph, node, ptrs);
      } else {
        run_quantized_node(graph, node, ptrs);
      }
      break;
  }
  // A fused clamp of float outputs; quantized kernels apply their range themselves.
  const uint32_t out = node.outputs[0];
  if (node.has_output_range() && graph.values[out].dtype == DataType::kFp32) {
    clamp_output(node, static_cast<float*>(ptrs[out]), graph.values[out].numel);
  }
}

void clamp_output(const GraphNode& node, float* data, size_t n) {
  if (!node.has_output_range()) return;  // clamping to +-infinity changes nothing, NaN neither
  for (size_t i = 0; i < n; ++i) data[i] = std::clamp(data[i], node.output_min, node.output_max);
}

}  // namespace et::xnn
