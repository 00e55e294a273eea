#include "backends/xnnpack/xnnpack_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <cstring>

#include "runtime/program.h"
#include "runtime/tensor.h"

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
    const xnn::Graph& g = graph_->graph();
    if (ctx.num_args() != g.externals.size()) {
      return ctx.fail(
          fmt::format("the delegate call passes {} arguments, the XNNPACK graph "
                      "has {} inputs and outputs",
                      ctx.num_args(), g.externals.size()));
    }
    widen_.clear();
    for (size_t i = 0; i < g.externals.size(); ++i) {
      const bool is_output = i >= g.num_inputs;
      const GraphValue& v = g.values[g.externals[i]];
      Tensor* t = nullptr;
      if (is_output) {
        ET_ASSIGN_OR_RETURN(t, ctx.output(i));
      } else {
        ET_ASSIGN_OR_RETURN(const Tensor* in, ctx.input(i));
        t = const_cast<Tensor*>(in);  // only read
      }
      if (static_cast<size_t>(t->numel()) != v.numel) {
        return ctx.fail(fmt::format(
            "{} {} has sizes [{}], the XNNPACK graph was exported for [{}] in dim order; "
            "XNNPACK graphs have static shapes, so re-export for this shape",
            is_output ? "output" : "input", is_output ? i - g.num_inputs : i,
            fmt::join(t->sizes(), ", "), fmt::join(v.dims, ", ")));
      }
      if (same_layout(t->dtype(), v.dtype)) {
        buffers_[i] = t->mutable_data();
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
    ET_RETURN_IF_ERROR(graph_->run(buffers_));
    for (const auto& [i, t] : widen_) {
      auto* out = t->data_as<int64_t>();
      for (int64_t e = 0; e < t->numel(); ++e) out[e] = scratch_[static_cast<size_t>(e)];
    }
    return Status();
  }

 private:
  std::shared_ptr<const CompiledGraph> graph_;
  std::vector<void*> buffers_;
  std::vector<int32_t> scratch_;
  std::vector<std::pair<size_t, Tensor*>> widen_;
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

 private:
  xnn::CompileOptions options_;
};

xnn::CompileOptions options_from_environment() {
  xnn::CompileOptions options;
  if (const char* p = std::getenv("ET_XNNPACK_PARTITION"); p && std::strcmp(p, "node") == 0) {
    options.partitioning = xnn::Partitioning::kNodeByNode;
  }
  if (const char* r = std::getenv("ET_XNNPACK_REPLICAS")) {
    const long n = std::strtol(r, nullptr, 10);
    if (n > 0) options.max_replicas = static_cast<size_t>(n);
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
