// Runs a compiled graph once on filler buffers: what the payload fuzzer, the fuzz
// regression replay and the refusal tests do with a payload that compiled.
#pragma once

#include <memory>
#include <vector>

#include "backends/xnnpack/compiled_graph.h"

namespace et::xnn::testing {

// One buffer per external value (inputs and outputs), each of exactly the value's
// bytes (no slack: a node that reads or writes past a value is an ASan report, and
// XNNPACK's over-reads of inputs must be handled by CompiledGraph), every 4 bytes
// holding `fill`; the run's status.
inline Status run_once(const CompiledGraph& graph, float fill = 0.5f) {
  const Graph& g = graph.graph();
  std::vector<std::unique_ptr<uint8_t[]>> buffers;
  std::vector<void*> ptrs;
  for (uint32_t id : g.externals) {
    const size_t nbytes = g.values[id].nbytes();
    buffers.emplace_back(new uint8_t[nbytes == 0 ? 1 : nbytes]);
    for (size_t b = 0; b < nbytes; ++b) {
      buffers.back()[b] = reinterpret_cast<const uint8_t*>(&fill)[b % sizeof(fill)];
    }
    ptrs.push_back(buffers.back().get());
  }
  return graph.run(ptrs);
}

}  // namespace et::xnn::testing
