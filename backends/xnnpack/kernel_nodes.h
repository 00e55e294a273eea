// Nodes the installed XNNPACK (Debian, 2022) cannot run, carried by the project's own
// kernels: layout nodes (transpose, slice, concatenate, copy), float math XNNPACK
// lacks (tanh, exp, log, sin, cos, gelu, reciprocal square root), batch matrix
// multiply and scaled dot-product attention; dynamic quantization (qdint8 Convert and
// FullyConnected, kernel_quantized.cc).
#pragma once

#include <span>

#include "backends/xnnpack/graph.h"

namespace et::xnn {

// Whether run_kernel_node() implements `node` (its type and data types).
bool kernel_runs(const Graph& graph, const GraphNode& node);

// Runs `node`. ptrs[id] is the buffer of value id, sized by its declared dims.
// REQUIRES: kernel_runs(graph, node) and check_node(graph, node) both passed.
void run_kernel_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);

// The pieces, one family per file.
void run_layout_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);
void run_math_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);
void run_matmul_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);
// Dynamic quantization: Convert fp32 -> qdint8 and FullyConnected with a qdint8 input.
bool quantized_runs(const Graph& graph, const GraphNode& node);
void run_quantized_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs);
// Clamps `n` floats to the node's output range (a fused activation).
void clamp_output(const GraphNode& node, float* data, size_t n);

}  // namespace et::xnn
