#include "backends/xnnpack/compiled_graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "backends/xnnpack/fp16_as_fp32.h"
#include "backends/xnnpack/kernel_nodes.h"
#include "backends/xnnpack/shapes.h"
#include "backends/xnnpack/xnnpack_limits.h"
#include "backends/xnnpack/xnnpack_run.h"
#include "runtime/core/sanitizers.h"
#include "runtime/core/thread_pool.h"

namespace et::xnn {
namespace {

constexpr size_t kAlignment = 64;

// Under ThreadSanitizer XNNPACK runs on the calling thread: XNNPACK is not
// instrumented, so TSan cannot see its writes on the pool's workers and would report
// every handed-over buffer as a race.
using ::et::kThreadSanitizer;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

namespace {
std::atomic<uint64_t> live_replicas{0};
std::atomic<uint64_t> live_weight_bytes{0};
}  // namespace

ReplicaStats replica_stats() {
  return {live_replicas.load(std::memory_order_relaxed),
          live_weight_bytes.load(std::memory_order_relaxed)};
}

struct CompiledGraph::Replica {
  explicit Replica(size_t weights) : weight_bytes(weights) {
    live_replicas.fetch_add(1, std::memory_order_relaxed);
    live_weight_bytes.fetch_add(weights, std::memory_order_relaxed);
  }
  ~Replica() {
    live_replicas.fetch_sub(1, std::memory_order_relaxed);
    live_weight_bytes.fetch_sub(weight_bytes, std::memory_order_relaxed);
  }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;
  const size_t weight_bytes;
  std::vector<XnnRun> runs;  // one per XNNPACK step, in step order
  std::unique_ptr<void, FreeDeleter> arena;
  std::vector<void*> ptrs;  // buffer of each value id (constants, staged; externals per run)
  std::vector<std::vector<uint8_t>> padded_inputs;  // by input index, made when needed
};

static_assert(kXnnExtraBytes == XNN_EXTRA_BYTES, "graph.h states XNNPACK's over-read");

void CompiledGraph::ReplicaDeleter::operator()(Replica* r) const { delete r; }

CompiledGraph::CompiledGraph(Graph graph, const CompileOptions& options)
    : graph_(std::move(graph)), options_(options) {
  options_.max_replicas = std::max<size_t>(1, options_.max_replicas);
}

CompiledGraph::~CompiledGraph() = default;

Result<std::shared_ptr<CompiledGraph>> CompiledGraph::create(Graph graph,
                                                             const CompileOptions& options) {
  promote_fp16_to_fp32(graph);
  std::shared_ptr<CompiledGraph> compiled(new CompiledGraph(std::move(graph), options));
  ET_RETURN_IF_ERROR(compiled->plan());
  ET_ASSIGN_OR_RETURN(ReplicaPtr first, compiled->make_replica());
  MutexLock lock(compiled->mu_);
  compiled->made_ = 1;
  compiled->idle_.push_back(std::move(first));
  return compiled;
}

Result<std::shared_ptr<const CompiledGraph>> CompiledGraph::for_input_dims(
    std::span<const std::vector<size_t>> input_dims) const {
  if (input_dims.size() != graph_.num_inputs) {
    return invalid_argument(fmt::format("XNNPACK graph: {} input shapes for {} inputs",
                                        input_dims.size(), graph_.num_inputs));
  }
  {
    MutexLock lock(mu_);
    for (Specialized& s : shapes_) {
      if (std::equal(s.input_dims.begin(), s.input_dims.end(), input_dims.begin(),
                     input_dims.end())) {
        s.last_use = ++uses_;
        return s.graph;
      }
    }
  }
  std::vector<std::vector<size_t>> dims(graph_.values.size());
  for (size_t id = 0; id < graph_.values.size(); ++id) dims[id] = graph_.values[id].dims;
  for (size_t i = 0; i < input_dims.size(); ++i) {
    const GraphValue& v = graph_.values[graph_.externals[i]];
    const std::vector<size_t>& want = input_dims[i];
    bool fits = want.size() == v.dims.size();
    for (size_t d = 0; fits && d < want.size(); ++d) fits = want[d] <= v.dims[d];
    if (std::find(want.begin(), want.end(), size_t{0}) != want.end()) {
      return invalid_argument(
          fmt::format("XNNPACK graph input {} has dims [{}]: XNNPACK cannot run an empty tensor", i,
                      fmt::join(want, ",")));
    }
    if (!fits) {
      return invalid_argument(
          fmt::format("XNNPACK graph input {} has dims [{}], above the [{}] it was exported for", i,
                      fmt::join(want, ","), fmt::join(v.dims, ",")));
    }
    dims[graph_.externals[i]] = want;
  }
  ET_RETURN_IF_ERROR(infer_dims(graph_, dims));
  Graph shaped;
  shaped.values = graph_.values;
  shaped.nodes = graph_.nodes;
  shaped.externals = graph_.externals;
  shaped.num_inputs = graph_.num_inputs;
  for (size_t id = 0; id < shaped.values.size(); ++id) {
    GraphValue& v = shaped.values[id];
    if (!v.defined || v.data) continue;
    v.dims = dims[id];
    v.numel = 1;
    for (size_t d : v.dims) v.numel *= d;
  }
  ET_ASSIGN_OR_RETURN(std::shared_ptr<CompiledGraph> compiled,
                      CompiledGraph::create(std::move(shaped), options_));
  MutexLock lock(mu_);
  for (Specialized& s : shapes_) {  // another thread compiled it meanwhile
    if (std::equal(s.input_dims.begin(), s.input_dims.end(), input_dims.begin(),
                   input_dims.end())) {
      s.last_use = ++uses_;
      return s.graph;
    }
  }
  if (shapes_.size() >= std::max<size_t>(1, options_.max_shapes)) {
    auto oldest = std::min_element(
        shapes_.begin(), shapes_.end(),
        [](const Specialized& a, const Specialized& b) { return a.last_use < b.last_use; });
    shapes_.erase(oldest);
  }
  shapes_.push_back(Specialized{{input_dims.begin(), input_dims.end()}, compiled, ++uses_});
  return std::shared_ptr<const CompiledGraph>(std::move(compiled));
}

std::vector<bool> CompiledGraph::parallel_nodes(const std::vector<bool>& on_xnnpack) const {
  const size_t count = graph_.nodes.size();
  std::vector<bool> big(count, false);
  for (uint32_t n = 0; n < count; ++n) {
    const uint32_t one[] = {n};
    big[n] = on_xnnpack[n] && run_work(graph_, one) >= options_.parallel_min_work;
  }
  // A short stretch of small nodes (a residual add, an activation) next to large ones in
  // the same run goes with them: another runtime would cost a boundary buffer and its
  // own workspace for less than it saves. Only longer stretches run on the caller.
  constexpr size_t kMinSerialStretch = 4;
  std::vector<bool> parallel = big;
  for (size_t begin = 0; begin < count;) {
    if (!on_xnnpack[begin] || big[begin]) {
      ++begin;
      continue;
    }
    size_t end = begin;
    while (end < count && on_xnnpack[end] && !big[end]) ++end;
    const bool big_before = begin > 0 && big[begin - 1];
    const bool big_after = end < count && big[end];
    if ((big_before || big_after) && end - begin < kMinSerialStretch) {
      for (size_t n = begin; n < end; ++n) parallel[n] = true;
    }
    begin = end;
  }
  return parallel;
}

Status CompiledGraph::plan() {
  const size_t nvalues = graph_.values.size();
  for (const GraphValue& v : graph_.values) {
    if (v.defined && !v.data) activation_bytes_ += v.nbytes();
  }
  if (activation_bytes_ > options_.max_activation_bytes) {
    return resource_exhausted(
        fmt::format("XNNPACK graph needs {} bytes of activations, over the limit of {}",
                    activation_bytes_, options_.max_activation_bytes));
  }
  std::vector<bool> written(nvalues, false), on_xnnpack(graph_.nodes.size(), false);
  for (uint32_t id : graph_.externals) {
    if (graph_.values[id].flags & kExternalInput) written[id] = true;
  }
  for (uint32_t n = 0; n < graph_.nodes.size(); ++n) {
    const GraphNode& node = graph_.nodes[n];
    ET_RETURN_IF_ERROR(check_node(graph_, node));
    if (node.type == NodeType::kFullyConnected &&
        graph_.values[node.inputs[1]].numel >= options_.packed_fc_min_filter) {
      pack_fully_connected_filter(graph_, node);
    }
    for (uint32_t id : node.inputs) {
      if (id != kNoValue && !graph_.values[id].data && !written[id]) {
        return invalid_program(
            fmt::format("XNNPACK {} (debug handle {}) reads value {} before "
                        "any node writes it",
                        node_type_name(node.type), node.debug_handle, id));
      }
    }
    const bool xnnpack = xnnpack_runs(graph_, node);
    if (xnnpack) ET_RETURN_IF_ERROR(check_xnnpack_limits(graph_, node));
    if (!xnnpack && !kernel_runs(graph_, node)) {
      std::string types;
      for (uint32_t id : node.inputs) {
        if (id != kNoValue) types += fmt::format("{} ", data_type_name(graph_.values[id].dtype));
      }
      return not_supported(fmt::format(
          "XNNPACK node {} (debug handle {}) with inputs of type {}cannot run: neither the "
          "installed XNNPACK nor this runtime's kernels implement it",
          node_type_name(node.type), node.debug_handle, types));
    }
    on_xnnpack[n] = xnnpack;
    for (uint32_t id : node.outputs) {
      if (written[id]) {
        return invalid_program(
            fmt::format("XNNPACK {} (debug handle {}) writes value {}, which "
                        "is written already",
                        node_type_name(node.type), node.debug_handle, id));
      }
      written[id] = true;
    }
  }
  for (size_t i = graph_.num_inputs; i < graph_.externals.size(); ++i) {
    if (!written[graph_.externals[i]]) {
      return invalid_program(
          fmt::format("XNNPACK output value {} is never written", graph_.externals[i]));
    }
  }
  const std::vector<bool> parallel = parallel_nodes(on_xnnpack);
  for (uint32_t n = 0; n < graph_.nodes.size(); ++n) {
    const bool extend = on_xnnpack[n] && !steps_.empty() && steps_.back().on_xnnpack &&
                        steps_.back().parallel == parallel[n] &&
                        options_.partitioning == Partitioning::kMaximalRuns;
    if (!extend) steps_.push_back(PlanStep{on_xnnpack[n], {}, {}, parallel[n]});
    steps_.back().nodes.push_back(n);
  }

  // Values read by a step other than their writer's, touched by kernel steps, or read
  // by no node at all live outside XNNPACK runtimes: in caller buffers (externals) or
  // staged in the replica. (XNNPACK gives a value nobody reads no memory, yet still
  // runs the node writing it: it asserts, or writes through a null pointer.)
  std::vector<std::vector<size_t>> users(nvalues);
  std::vector<bool> read(nvalues, false), xnnpack_constant(nvalues, false);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (uint32_t n : steps_[s].nodes) {
      for (uint32_t id : graph_.nodes[n].inputs) {
        if (id == kNoValue) continue;
        users[id].push_back(s);
        read[id] = true;
        xnnpack_constant[id] =
            xnnpack_constant[id] || (steps_[s].on_xnnpack && graph_.values[id].data);
      }
      for (uint32_t id : graph_.nodes[n].outputs) users[id].push_back(s);
    }
  }
  // What each replica packs a copy of: the constants XNNPACK's steps read.
  for (uint32_t id = 0; id < nvalues; ++id) {
    if (xnnpack_constant[id]) weight_bytes_ += graph_.values[id].nbytes();
  }
  std::vector<bool> outside(nvalues, false);
  for (uint32_t id = 0; id < nvalues; ++id) {
    const GraphValue& v = graph_.values[id];
    if (!v.defined || v.data || users[id].empty()) continue;
    const bool external = v.flags != 0;
    const bool shared = std::any_of(users[id].begin(), users[id].end(),
                                    [&](size_t s) { return s != users[id].front(); });
    const bool kernel = std::any_of(users[id].begin(), users[id].end(),
                                    [&](size_t s) { return !steps_[s].on_xnnpack; });
    outside[id] = external || shared || kernel || !read[id];
    if (outside[id] && !external) staged_.push_back(id);
  }
  for (PlanStep& step : steps_) {
    if (!step.on_xnnpack) continue;
    for (uint32_t n : step.nodes) {
      const GraphNode& node = graph_.nodes[n];
      for (const auto* ids : {&node.inputs, &node.outputs}) {
        for (uint32_t id : *ids) {
          if (id != kNoValue && outside[id] &&
              std::find(step.boundary.begin(), step.boundary.end(), id) == step.boundary.end()) {
            step.boundary.push_back(id);
          }
        }
      }
    }
  }
  return Status();
}

Result<CompiledGraph::ReplicaPtr> CompiledGraph::make_replica() const {
  ReplicaPtr replica(new Replica(weight_bytes_));
  replica->ptrs.assign(graph_.values.size(), nullptr);
  for (uint32_t id = 0; id < graph_.values.size(); ++id) {
    replica->ptrs[id] = const_cast<void*>(graph_.values[id].data);
  }
  size_t total = 0;
  std::vector<size_t> offsets;
  for (uint32_t id : staged_) {
    offsets.push_back(total);
    // XNNPACK may read (never write) up to XNN_EXTRA_BYTES past a buffer's end.
    total += round_up(graph_.values[id].nbytes() + XNN_EXTRA_BYTES, kAlignment);
  }
  if (total > 0) {
    replica->arena.reset(std::aligned_alloc(kAlignment, total));
    if (!replica->arena) {
      return resource_exhausted(
          fmt::format("XNNPACK: no memory for {} bytes of activations", total));
    }
    for (size_t i = 0; i < staged_.size(); ++i) {
      replica->ptrs[staged_[i]] = static_cast<uint8_t*>(replica->arena.get()) + offsets[i];
    }
  }
  for (const PlanStep& step : steps_) {
    if (!step.on_xnnpack) continue;
    pthreadpool_t threads =
        step.parallel && !kThreadSanitizer ? ThreadPool::global().native() : nullptr;
    ET_ASSIGN_OR_RETURN(XnnRun run, XnnRun::create(graph_, step.nodes, step.boundary, threads));
    replica->runs.push_back(std::move(run));
  }
  return replica;
}

size_t run_work(const Graph& graph, std::span<const uint32_t> nodes) {
  size_t work = 0;
  auto add = [&work](size_t outputs, size_t depth) {
    const size_t cost = depth != 0 && outputs > SIZE_MAX / depth ? SIZE_MAX : outputs * depth;
    work = cost > SIZE_MAX - work ? SIZE_MAX : work + cost;
  };
  for (uint32_t n : nodes) {
    const GraphNode& node = graph.nodes[n];
    if (node.outputs.empty()) continue;
    const GraphValue& out = graph.values[node.outputs[0]];
    size_t depth = 1;
    switch (node.type) {
      case NodeType::kConv2d:
      case NodeType::kDepthwiseConv2d:
      case NodeType::kConvTranspose2d:
      case NodeType::kFullyConnected: {
        const GraphValue& filter = graph.values[node.inputs[1]];
        const size_t channels = out.dims.empty() ? 1 : out.dims.back();
        depth = channels == 0 ? 0 : filter.numel / channels;
        break;
      }
      case NodeType::kBatchMatrixMultiply: {
        const GraphValue& a = graph.values[node.inputs[0]];
        depth = a.dims.empty() ? 1 : a.dims.back();
        break;
      }
      default:
        break;
    }
    add(out.numel, depth);
  }
  return work;
}

size_t CompiledGraph::replicas() const {
  MutexLock lock(mu_);
  return made_;
}

Result<CompiledGraph::ReplicaPtr> CompiledGraph::acquire() const {
  MutexLock lock(mu_);
  for (;;) {
    if (!idle_.empty()) {
      ReplicaPtr r = std::move(idle_.back());
      idle_.pop_back();
      return r;
    }
    if (made_ < options_.max_replicas) break;
    lock.wait(freed_);
  }
  ++made_;
  lock.unlock();
  // The count is given back if making the replica fails or throws, so no failure can
  // leave later runs waiting for a replica that will never exist.
  struct Uncount {
    const CompiledGraph* graph;
    bool keep = false;
    ~Uncount() {
      if (keep) return;
      {
        MutexLock relock(graph->mu_);
        --graph->made_;
      }
      graph->freed_.notify_one();
    }
  } uncount{this};
  Result<ReplicaPtr> made = make_replica();
  uncount.keep = made.ok();
  return made;
}

void CompiledGraph::release(ReplicaPtr replica) const {
  {
    MutexLock lock(mu_);
    idle_.push_back(std::move(replica));
  }
  freed_.notify_one();
}

namespace {

// What a step runs, for its profile event: "XNNPACK Conv2d x3, Clamp x2" for a run of
// nodes compiled into one runtime, the node type for one run by our kernels.
std::string step_name(const Graph& graph, const PlanStep& step) {
  if (!step.on_xnnpack) {
    return fmt::format("{} (own kernel)", node_type_name(graph.nodes[step.nodes.front()].type));
  }
  std::vector<std::pair<std::string_view, int>> counts;  // in first-seen order
  for (uint32_t n : step.nodes) {
    const std::string_view type = node_type_name(graph.nodes[n].type);
    auto it =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == type; });
    if (it == counts.end()) {
      counts.emplace_back(type, 1);
    } else {
      ++it->second;
    }
  }
  std::string name = "XNNPACK";
  for (size_t i = 0; i < counts.size(); ++i) {
    name += fmt::format("{} {}", i == 0 ? "" : ",", counts[i].first);
    if (counts[i].second > 1) name += fmt::format(" x{}", counts[i].second);
  }
  return name;
}

}  // namespace

Status CompiledGraph::run(std::span<void* const> externals, DelegateProfile* profile) const {
  ET_ASSIGN_OR_RETURN(ReplicaPtr leased, acquire());
  // Returned to the pool however this run ends, an exception included.
  struct Lease {
    const CompiledGraph* graph;
    ReplicaPtr replica;
    ~Lease() { graph->release(std::move(replica)); }
  } lease{this, std::move(leased)};
  ReplicaPtr& replica = lease.replica;
  for (size_t i = 0; i < graph_.externals.size(); ++i) {
    replica->ptrs[graph_.externals[i]] = externals[i];
  }
  replica->padded_inputs.resize(graph_.num_inputs);
  for (size_t i = 0; i < graph_.num_inputs; ++i) {
    const size_t nbytes = graph_.values[graph_.externals[i]].nbytes();
    if (over_read_is_safe(externals[i], nbytes)) continue;
    std::vector<uint8_t>& copy = replica->padded_inputs[i];
    copy.resize(nbytes + XNN_EXTRA_BYTES);
    std::memcpy(copy.data(), externals[i], nbytes);
    replica->ptrs[graph_.externals[i]] = copy.data();
  }
  Status status;
  size_t run_index = 0;
  for (const PlanStep& step : steps_) {
    if (step.on_xnnpack) {
      const int64_t started = profile != nullptr ? profile_clock_ns() : 0;
      status = replica->runs[run_index++].run(replica->ptrs);
      if (profile != nullptr) {
        profile->add_step(step_name(graph_, step), graph_.nodes[step.nodes.front()].debug_handle,
                          started, profile_clock_ns());
      }
      if (!status.ok()) break;
    } else {
      for (uint32_t n : step.nodes) {
        const int64_t started = profile != nullptr ? profile_clock_ns() : 0;
        run_kernel_node(graph_, graph_.nodes[n], replica->ptrs);
        if (profile != nullptr) {
          profile->add_step(step_name(graph_, {false, {n}, {}, false}),
                            graph_.nodes[n].debug_handle, started, profile_clock_ns());
        }
      }
    }
  }
  return status;
}

}  // namespace et::xnn
