// Shape rules of XNNPACK nodes: what each node's output dims must be, given its
// inputs and parameters.
//
// The payload declares every value's dims. XNNPACK (and our kernel steps) size their
// work from the inputs and write the declared output buffer, so a payload whose
// declared output disagrees with the rule would write out of bounds. Planning calls
// check_node() for every node and refuses the payload on any mismatch.
#pragma once

#include "backends/xnnpack/graph.h"
#include "runtime/core/status.h"

namespace et::xnn {

// InvalidProgram naming the node type and the disagreement (dims, ranks, parameters,
// data types of layout nodes); NotSupported for flags or forms this backend lacks.
Status check_node(const Graph& graph, const GraphNode& node);

// The dims every node produces when the graph's inputs have `dims` instead of their
// declared ones (a method's dynamic dims, within their upper bounds). `dims` holds one
// entry per value id: on entry the declared dims with the external inputs' replaced,
// on return every node output's dims follow from the node's rules. Errors as
// check_node(), for the first node the new dims do not fit.
Status infer_dims(const Graph& graph, std::vector<std::vector<size_t>>& dims);

// Broadcast of two dims lists (numpy rules, right-aligned); nullopt-like empty result
// with ok=false when they do not broadcast.
bool broadcast_dims(std::span<const size_t> a, std::span<const size_t> b, std::vector<size_t>& out);

}  // namespace et::xnn
