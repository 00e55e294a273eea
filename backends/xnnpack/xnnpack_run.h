// A run of consecutive graph nodes compiled into one XNNPACK runtime.
//
// The runtime holds the run's packed weights and its internal activations. Values
// the run exchanges with the rest of the graph (its boundary) are XNNPACK external
// values whose buffers the caller binds on every run().
#pragma once

#include <xnnpack.h>

#include <memory>
#include <span>
#include <vector>

#include "backends/xnnpack/graph.h"
#include "runtime/core/status.h"

namespace et::xnn {

// Initialises XNNPACK once per process. FailedPrecondition when the CPU is unsupported.
Status ensure_xnnpack_initialized();

// Whether the installed XNNPACK has a node for `node` (type and data types).
bool xnnpack_runs(const Graph& graph, const GraphNode& node);

class XnnRun {
 public:
  // Compiles graph.nodes[i] for i in `nodes`. `boundary` lists the value ids bound
  // by the caller, in the order run() reads them. Packs the weights (slow: once per
  // replica). Errors name the node XNNPACK refused.
  static Result<XnnRun> create(const Graph& graph, std::span<const uint32_t> nodes,
                               std::vector<uint32_t> boundary, pthreadpool_t threadpool);

  // Runs with ptrs[id] as the buffer of each boundary value id.
  // Not thread-safe: one caller at a time.
  Status run(std::span<void* const> ptrs);

 private:
  struct RuntimeDeleter {
    void operator()(xnn_runtime_t runtime) const { xnn_delete_runtime(runtime); }
  };
  XnnRun() = default;

  std::unique_ptr<xnn_runtime, RuntimeDeleter> runtime_;
  std::vector<uint32_t> boundary_;
  std::vector<xnn_external_value> bound_;  // as last set up; setup is skipped when unchanged
};

}  // namespace et::xnn
