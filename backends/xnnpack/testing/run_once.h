// Runs a compiled graph once on filler buffers: what the payload fuzzer, the fuzz
// regression replay and the refusal tests do with a payload that compiled.
#pragma once

#include <vector>

#include "backends/xnnpack/compiled_graph.h"

namespace et::xnn::testing {

// One buffer per external value (inputs and outputs), each a little longer than the
// value and filled with `fill`; the run's status.
inline Status run_once(const CompiledGraph& graph, float fill = 0.5f) {
  const Graph& g = graph.graph();
  std::vector<std::vector<float>> buffers;
  std::vector<void*> ptrs;
  for (uint32_t id : g.externals) {
    buffers.emplace_back((g.values[id].nbytes() + 3) / 4 + 4, fill);
    ptrs.push_back(buffers.back().data());
  }
  return graph.run(ptrs);
}

}  // namespace et::xnn::testing
