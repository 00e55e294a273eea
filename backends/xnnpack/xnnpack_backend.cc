#include "backends/xnnpack/xnnpack_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <cstring>

#include "backends/xnnpack/graph.h"
#include "backends/xnnpack/xnnpack_run.h"
#include "runtime/core/half.h"
#include "runtime/core/program.h"
#include "runtime/core/tensor.h"

namespace et {
namespace {

using xnn::CompiledGraph;
using xnn::DataType;
using xnn::GraphValue;

// Whether a runtime tensor of `t` can be handed to XNNPACK as `v` without conversion.
bool same_layout(ScalarType t, DataType v) {
  switch (v) {
    case DataType::kFp32:
      return t == ScalarType::kFloat;
    case DataType::kFp16:
      return t == ScalarType::kHalf;
    case DataType::kInt32:
    case DataType::kQInt32:
    case DataType::kQcInt32:
      return t == ScalarType::kInt || t == ScalarType::kQInt32;
    case DataType::kQInt8:
    case DataType::kQcInt8:
    case DataType::kQdInt8:
      return t == ScalarType::kChar || t == ScalarType::kQInt8;
    case DataType::kQUInt8:
      return t == ScalarType::kByte || t == ScalarType::kQUInt8;
    default:
      return false;
  }
}

class XnnpackInstance final : public DelegateInstance {
 public:
  explicit XnnpackInstance(std::shared_ptr<const CompiledGraph> graph)
      : graph_(std::move(graph)), buffers_(graph_->graph().externals.size(), nullptr) {}

  Status execute(KernelContext& ctx) override {
    const xnn::Graph& declared = graph_->graph();
    if (ctx.num_args() != declared.externals.size()) {
      return ctx.fail(
          fmt::format("the delegate call passes {} arguments, the XNNPACK graph "
                      "has {} inputs and outputs",
                      ctx.num_args(), declared.externals.size()));
    }
    // Inputs below their declared (upper-bound) dims run a graph compiled for them.
    const CompiledGraph* graph = graph_.get();
    std::shared_ptr<const CompiledGraph> shaped;
    ET_RETURN_IF_ERROR(input_dims(ctx, declared));
    if (dynamic_) {
      Result<std::shared_ptr<const CompiledGraph>> r = graph_->for_input_dims(dims_);
      if (!r.ok()) return ctx.fail(std::string(r.status().message()));
      shaped = std::move(r).value();
      graph = shaped.get();
    }
    const xnn::Graph& g = graph->graph();
    widen_.clear();
    narrow_.clear();
    halves_.resize(g.externals.size());
    for (size_t i = 0; i < g.externals.size(); ++i) {
      const bool is_output = i >= g.num_inputs;
      const GraphValue& v = g.values[g.externals[i]];
      Tensor* t = nullptr;
      if (is_output) {
        ET_ASSIGN_OR_RETURN(t, ctx.output(i));
        // Also back to the declared dims after a smaller call.
        ET_RETURN_IF_ERROR(resize_to(ctx, *t, v.dims, i - g.num_inputs));
      } else {
        ET_ASSIGN_OR_RETURN(const Tensor* in, ctx.input(i));
        t = const_cast<Tensor*>(in);  // only read
      }
      if (static_cast<size_t>(t->numel()) != v.numel) {
        return ctx.fail(
            fmt::format("{} {} has sizes [{}], the XNNPACK graph has [{}] in dim order for it",
                        is_output ? "output" : "input", is_output ? i - g.num_inputs : i,
                        fmt::join(t->sizes(), ", "), fmt::join(v.dims, ", ")));
      }
      if (same_layout(t->dtype(), v.dtype)) {
        buffers_[i] = t->mutable_data();
      } else if (t->dtype() == ScalarType::kHalf && v.dtype == DataType::kFp32) {
        // A float16 graph computes in float32 (fp16_as_fp32.h): convert at the boundary.
        std::vector<float>& floats = halves_[i];
        floats.resize(v.numel);
        if (is_output) {
          narrow_.push_back({i, t});
        } else {
          const auto* halves = static_cast<const Half*>(t->data());
          for (size_t e = 0; e < v.numel; ++e) floats[e] = halves[e];
        }
        buffers_[i] = floats.data();
      } else if (is_output && t->dtype() == ScalarType::kLong && v.dtype == DataType::kInt32) {
        scratch_.resize(std::max(scratch_.size(), v.numel));
        widen_.push_back({i, t});
        buffers_[i] = nullptr;  // assigned below, once scratch_ has its final size
      } else {
        return ctx.fail(fmt::format("{} {} is {}, the XNNPACK graph expects {}",
                                    is_output ? "output" : "input",
                                    is_output ? i - g.num_inputs : i, scalar_type_name(t->dtype()),
                                    xnn::data_type_name(v.dtype)));
      }
    }
    if (widen_.size() > 1) return ctx.unsupported("more than one int64 output");
    for (const auto& [i, t] : widen_) buffers_[i] = scratch_.data();
    ET_RETURN_IF_ERROR(graph->run(buffers_, current_delegate_profile()));
    for (const auto& [i, t] : widen_) {
      auto* out = t->data_as<int64_t>();
      for (int64_t e = 0; e < t->numel(); ++e) out[e] = scratch_[static_cast<size_t>(e)];
    }
    for (const auto& [i, t] : narrow_) {
      auto* out = static_cast<Half*>(t->mutable_data());
      const std::vector<float>& floats = halves_[i];
      for (size_t e = 0; e < floats.size(); ++e) out[e] = Half(floats[e]);
    }
    return Status();
  }

 private:
  // Fills dims_ with each input's sizes in its dim order (as XNNPACK sees it) and sets
  // dynamic_ when any differs from the declared dims.
  Status input_dims(KernelContext& ctx, const xnn::Graph& g) {
    dims_.resize(g.num_inputs);
    dynamic_ = false;
    for (size_t i = 0; i < g.num_inputs; ++i) {
      ET_ASSIGN_OR_RETURN(const Tensor* t, ctx.input(i));
      std::vector<size_t>& d = dims_[i];
      const xnn::GraphValue& v = g.values[g.externals[i]];
      if (static_cast<size_t>(t->dim()) != v.dims.size()) {
        d = v.dims;  // e.g. a 0-d tensor as XNNPACK's [1]: the element count is checked later
        continue;
      }
      d.resize(static_cast<size_t>(t->dim()));
      for (int k = 0; k < t->dim(); ++k) d[k] = static_cast<size_t>(t->size(t->dim_order()[k]));
      dynamic_ |= d != v.dims;
    }
    return Status();
  }

  // Resizes output `index` to `dims` given in its dim order.
  static Status resize_to(KernelContext& ctx, Tensor& t, const std::vector<size_t>& dims,
                          size_t index) {
    if (dims.size() != static_cast<size_t>(t.dim())) {
      return Status();  // e.g. a 0-d output as XNNPACK's [1]: the element count is checked later
    }
    std::array<int64_t, kMaxRank> sizes{};
    for (int k = 0; k < t.dim(); ++k) sizes[t.dim_order()[k]] = static_cast<int64_t>(dims[k]);
    Status s = t.resize(std::span<const int64_t>(sizes.data(), dims.size()));
    if (!s.ok()) return ctx.fail(fmt::format("output {}: {}", index, s.message()));
    return Status();
  }

  std::shared_ptr<const CompiledGraph> graph_;
  std::vector<std::vector<size_t>> dims_;
  bool dynamic_ = false;
  std::vector<void*> buffers_;
  std::vector<int32_t> scratch_;
  std::vector<std::pair<size_t, Tensor*>> widen_;
  // Float16 externals of a graph computing in float32: each one's float32 buffer, and
  // the outputs to round back to float16 after a run.
  std::vector<std::vector<float>> halves_;
  std::vector<std::pair<size_t, Tensor*>> narrow_;
};

class XnnpackBackend final : public Backend {
 public:
  explicit XnnpackBackend(const xnn::CompileOptions& options) : options_(options) {}

  Result<std::unique_ptr<DelegateInstance>> init(const DelegateSpec& spec) const override {
    // Keyed by the payload's place in the program: identical delegates of different
    // methods (or instances) share one compiled graph.
    const std::string key =
        fmt::format("{}@{}+{}", kXnnpackBackendId, static_cast<const void*>(spec.payload.data()),
                    spec.payload.size());
    const Program* program = spec.program;
    ET_ASSIGN_OR_RETURN(
        std::shared_ptr<const void> cached,
        program->backend_cache().get_or_create(key, [&]() -> Result<std::shared_ptr<const void>> {
          auto named = [program](std::string_view name) { return program->named_data(name); };
          ET_ASSIGN_OR_RETURN(xnn::Graph graph, xnn::parse_graph(spec.payload, named));
          ET_ASSIGN_OR_RETURN(std::shared_ptr<CompiledGraph> compiled,
                              CompiledGraph::create(std::move(graph), options_));
          return std::shared_ptr<const void>(std::move(compiled));
        }));
    auto graph = std::static_pointer_cast<const CompiledGraph>(cached);
    return std::unique_ptr<DelegateInstance>(new XnnpackInstance(std::move(graph)));
  }

  Status prepare() const override { return xnn::ensure_xnnpack_initialized(); }

  std::vector<BackendGauge> gauges() const override {
    const xnn::ReplicaStats replicas = xnn::replica_stats();
    return {
        {"et_serverd_xnnpack_replicas",
         "XNNPACK runtimes holding packed weights (one per program graph and concurrent run, "
         "shared by all method instances of the program).",
         static_cast<double>(replicas.replicas)},
        {"et_serverd_xnnpack_packed_weight_bytes",
         "Bytes of constant weights the XNNPACK replicas were packed from (about the packed "
         "size; held once per replica, not per method instance).",
         static_cast<double>(replicas.weight_bytes)},
        {"et_serverd_kernel_packed_weight_bytes",
         "Bytes of weights packed for the daemon's own kernels (float32 fully connected "
         "filters, 4-bit weights): held once per program, shared by every input shape, "
         "replica and method instance.",
         static_cast<double>(xnn::kernel_weight_bytes())},
    };
  }

 private:
  xnn::CompileOptions options_;
};

xnn::CompileOptions options_from_environment() {
  xnn::CompileOptions options;
  if (const char* p = std::getenv("ET_XNNPACK_PARTITION"); p && std::strcmp(p, "node") == 0) {
    options.partitioning = xnn::Partitioning::kNodeByNode;
  }
  if (const char* n = std::getenv("ET_XNNPACK_SHAPES")) {
    const long v = std::strtol(n, nullptr, 10);
    if (v > 0) options.max_shapes = static_cast<size_t>(v);
  }
  if (const char* r = std::getenv("ET_XNNPACK_REPLICAS")) {
    const long n = std::strtol(r, nullptr, 10);
    if (n > 0) options.max_replicas = static_cast<size_t>(n);
  }
  if (const char* w = std::getenv("ET_XNNPACK_PARALLEL_MIN_WORK")) {
    const long long v = std::strtoll(w, nullptr, 10);
    if (v >= 0) options.parallel_min_work = static_cast<size_t>(v);
  }
  if (const char* f = std::getenv("ET_XNNPACK_FC_MIN_FILTER")) {
    const long long v = std::strtoll(f, nullptr, 10);
    if (v >= 0) options.packed_fc_min_filter = static_cast<size_t>(v);
  }
  return options;
}

struct Registration {
  Registration() {
    Status s = BackendRegistry::global().add(std::string(kXnnpackBackendId),
                                             make_xnnpack_backend(options_from_environment()));
    if (!s.ok()) {
      std::fprintf(stderr, "et: %s\n", s.to_string().c_str());
      std::abort();
    }
  }
};
const Registration kRegistration;

}  // namespace

std::shared_ptr<const Backend> make_xnnpack_backend(const xnn::CompileOptions& options) {
  return std::make_shared<XnnpackBackend>(options);
}

}  // namespace et
