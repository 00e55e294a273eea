// What the installed XNNPACK cannot be trusted with, checked before it sees a node.
//
// Debian's libxnnpack (git 2022-02-16) is built with assert() on: for some parameters
// it asserts (aborting the daemon) or writes past an output buffer instead of refusing
// them with a status. A payload is untrusted input, so planning asks this check for
// every node it would give XNNPACK, after check_node() (shapes.h) has passed, and fails
// the load on a refusal (no kernel of ours runs these node types). Each rule names the
// XNNPACK behaviour it guards against; xnnpack_limits_test.cc shows each one.
#pragma once

#include "backends/xnnpack/graph.h"
#include "runtime/core/status.h"

namespace et::xnn {

// Ok when XNNPACK can run `node` safely; else NotSupported (a form this XNNPACK cannot
// run safely) or InvalidProgram (values that no XNNPACK node accepts), naming the node,
// its debug handle and the limit.
Status check_xnnpack_limits(const Graph& graph, const GraphNode& node);

}  // namespace et::xnn
