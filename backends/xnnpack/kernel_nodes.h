// Nodes the project's own kernels carry: those the installed XNNPACK (Debian, 2022)
// cannot run (layout nodes: transpose, slice, concatenate, copy; float math it lacks:
// tanh, exp, log, sin, cos, gelu, reciprocal square root; batch matrix multiply, scaled
// dot-product attention; dynamic quantization: qdint8 Convert and FullyConnected,
// kernel_quantized.cc), and float32 FullyConnected on filters packed once, which runs
// faster here than on that XNNPACK and holds one copy of the packed filter for every
// input shape and replica.
#pragma once

#include <span>

#include "backends/xnnpack/graph.h"

namespace et::xnn {

// The family of this backend's kernels that runs a node type the installed XNNPACK
// (Debian, 2022) lacks; kNone for the types XNNPACK has (of which run_kernel_node()
// also runs FullyConnected and Convert in forms it lacks or runs slower). The one list
// of those types: xnnpack_runs() refuses them, kernel_runs() and run_kernel_node() take
// them by family.
enum class KernelFamily { kNone, kLayout, kMath, kMatmul };
KernelFamily kernel_family(NodeType type);

// Whether run_kernel_node() implements `node` (its type and data types).
bool kernel_runs(const Graph& graph, const GraphNode& node);

// Runs `node`. ptrs[id] is the buffer of value id, sized by its declared dims.
// REQUIRES: kernel_runs(graph, node) and check_node(graph, node) both passed.
void run_kernel_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);

// The pieces, one family per file.
void run_layout_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);
void run_math_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);
void run_matmul_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);
// When `node` is a float32 FullyConnected (input, filter, bias and output float32),
// packs its constant filter into the filter's GraphValue::packed (once: a filter
// shared by several nodes, or by copies of the graph, keeps its packing), so that
// kernel_runs() takes the node and run_matmul_node runs it on kernels/math/packed_sgemm.h.
// Does nothing for other nodes. REQUIRES: check_node(graph, node) passed.
void pack_fully_connected_filter(Graph& graph, const GraphNode& node);
// Whether `node` is a FullyConnected whose filter pack_fully_connected_filters packed.
bool fully_connected_packed(const Graph& graph, const GraphNode& node);
// Dynamic quantization: Convert fp32 -> qdint8 and FullyConnected with a qdint8 input.
bool quantized_runs(const Graph& graph, const GraphNode& node);
void run_quantized_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);
// Clamps `n` floats to the node's output range (a fused activation).
void clamp_output(const GraphNode& node, float* data, size_t n);

}  // namespace et::xnn
