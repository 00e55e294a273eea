// A verified XNNPACK graph, planned into steps and ready to run; one per delegate
// payload, shared by every method instance of the program (DESIGN.md §4).
//
// The plan alternates XNNPACK runs (consecutive nodes the installed XNNPACK has,
// compiled into one runtime each) and kernel steps (the project's kernels for nodes
// it lacks). A *replica* holds what running needs: the runtimes (packed weights,
// internal activations) and the buffers of values exchanged between steps. Replicas
// are made on demand and reused, so packed weights exist once per concurrent run of
// the graph, not once per method instance.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "backends/xnnpack/graph.h"
#include "port/mutex.h"
#include "runtime/core/profile.h"
#include "runtime/core/status.h"

namespace et::xnn {

enum class Partitioning {
  kMaximalRuns,  // one XNNPACK runtime per run of consecutive XNNPACK nodes (default)
  kNodeByNode,   // one runtime per XNNPACK node (for measuring the difference)
};

struct CompileOptions {
  Partitioning partitioning = Partitioning::kMaximalRuns;
  // Replicas (copies of the packed weights) one graph may hold; runs beyond this many
  // at once wait for a free one.
  size_t max_replicas = 2;
  // Refuse graphs whose non-constant values together exceed this (ResourceExhausted),
  // so a hostile payload cannot make the process allocate without bound.
  size_t max_activation_bytes = size_t{4} << 30;
  // Distinct input shapes (below the declared upper bounds) one graph keeps compiled;
  // beyond this many the least recently used is dropped (each holds its own packed
  // weights: the installed XNNPACK cannot reshape a runtime or share weights).
  size_t max_shapes = 8;
  // XNNPACK nodes with less work than this (run_work(), about multiply-adds) run on the
  // calling thread: waking the pool costs more than it saves on small operators. A run
  // of XNNPACK nodes is split where this changes, so each runtime either has the pool
  // or does not; fewer than 4 small nodes next to large ones go with the large ones.
  size_t parallel_min_work = size_t{1} << 17;
  // float32 FullyConnected nodes whose constant filter has at least this many elements
  // run on packed_sgemm, the filter packed once for every input shape and replica
  // (pack_fully_connected_filter); smaller ones stay on XNNPACK, which packs a copy per
  // shape and replica but runs small products with less overhead. 0: every one on
  // packed_sgemm; SIZE_MAX: every one on XNNPACK.
  size_t packed_fc_min_filter = size_t{1} << 17;
};

// The work of running `nodes` of `graph`, about multiply-adds: each output element costs
// the depth of its dot product (a filter's elements per output channel for convolutions
// and FullyConnected, the shared dim for batch matrix products), or one for the other
// nodes.
size_t run_work(const Graph& graph, std::span<const uint32_t> nodes);

struct PlanStep {
  bool on_xnnpack = false;
  std::vector<uint32_t> nodes;     // indices into graph.nodes
  std::vector<uint32_t> boundary;  // XNNPACK steps: value ids bound by the caller
  bool parallel = false;           // XNNPACK steps: its runtime gets the thread pool
};

// The replicas alive in this process and the bytes of constant weights they were built
// from (XNNPACK packs its own copy of them into each replica, about as large): what the
// daemon's metrics page shows of weights shared between method instances.
struct ReplicaStats {
  uint64_t replicas = 0;
  uint64_t weight_bytes = 0;
};
ReplicaStats replica_stats();

class CompiledGraph {
 public:
  // Verifies every node's shapes, plans the steps (packing large float32
  // FullyConnected filters for our kernels, CompileOptions::packed_fc_min_filter) and
  // builds the first replica, so
  // every error (an unsupported node type, a node XNNPACK refuses) surfaces here.
  // Float16 values are compiled as float32 (fp16_as_fp32.h): graph() then says fp32,
  // and run() takes and gives float32 buffers for them.
  // Errors: NotSupported naming the node type and debug handle; InvalidProgram for
  // inconsistent graphs (a value read before written, an output never written).
  static Result<std::shared_ptr<CompiledGraph>> create(Graph graph, const CompileOptions& options);

  ~CompiledGraph();
  CompiledGraph(const CompiledGraph&) = delete;
  CompiledGraph& operator=(const CompiledGraph&) = delete;

  const Graph& graph() const { return graph_; }
  const std::vector<PlanStep>& steps() const { return steps_; }
  size_t replicas() const;  // made so far

  // Runs the graph once. externals[i] is the buffer of external id i, sized by that
  // value's declared dims (inputs read, outputs written). With `profile`, each step is
  // timed: a run of nodes compiled into one XNNPACK runtime as one step (Debian's
  // XNNPACK times nothing inside a runtime), a node run by our own kernels as a step of
  // its own; a step's debug id is its first node's debug handle.
  // Thread-safe: concurrent calls use different replicas.
  Status run(std::span<void* const> externals, DelegateProfile* profile = nullptr) const;

  // This graph compiled for inputs of `input_dims` (one per graph input, in external id
  // order): the method's dynamic dims, each at most the declared one. Every node's
  // dims follow from the inputs (shapes.h: infer_dims); the result is planned and
  // compiled like the original and cached (CompileOptions::max_shapes). The result
  // shares this graph's constants: keep this graph alive while using it.
  // Errors: InvalidArgument naming the input whose dims exceed the declared ones or a
  // node the dims do not fit; errors of create(). Thread-safe.
  Result<std::shared_ptr<const CompiledGraph>> for_input_dims(
      std::span<const std::vector<size_t>> input_dims) const;

 private:
  struct Replica;
  struct ReplicaDeleter {
    void operator()(Replica* r) const;
  };
  using ReplicaPtr = std::unique_ptr<Replica, ReplicaDeleter>;

  CompiledGraph(Graph graph, const CompileOptions& options);
  Status plan();
  // Which nodes run on a runtime with the thread pool (CompileOptions::parallel_min_work).
  std::vector<bool> parallel_nodes(const std::vector<bool>& on_xnnpack) const;
  Result<ReplicaPtr> make_replica() const;
  Result<ReplicaPtr> acquire() const;
  void release(ReplicaPtr replica) const;

  Graph graph_;
  CompileOptions options_;
  std::vector<PlanStep> steps_;
  std::vector<uint32_t> staged_;  // value ids that need a buffer outside XNNPACK
  size_t activation_bytes_ = 0;
  size_t weight_bytes_ = 0;  // of the constants: counted per replica in replica_stats()

  mutable Mutex mu_;
  mutable std::condition_variable freed_;
  mutable std::vector<ReplicaPtr> idle_ ET_GUARDED_BY(mu_);
  mutable size_t made_ ET_GUARDED_BY(mu_) = 0;
  struct Specialized {
    std::vector<std::vector<size_t>> input_dims;
    std::shared_ptr<const CompiledGraph> graph;
    uint64_t last_use = 0;
  };
  mutable std::vector<Specialized> shapes_ ET_GUARDED_BY(mu_);
  mutable uint64_t uses_ ET_GUARDED_BY(mu_) = 0;
};

}  // namespace et::xnn
