#include "server/kserve/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace et::server::kserve {

std::string_view datatype_name(ScalarType type) {
  switch (type) {
    case ScalarType::kBool:
      return "BOOL";
    case ScalarType::kByte:
      return "UINT8";
    case ScalarType::kUInt16:
      return "UINT16";
    case ScalarType::kUInt32:
      return "UINT32";
    case ScalarType::kUInt64:
      return "UINT64";
    case ScalarType::kChar:
      return "INT8";
    case ScalarType::kShort:
      return "INT16";
    case ScalarType::kInt:
      return "INT32";
    case ScalarType::kLong:
      return "INT64";
    case ScalarType::kHalf:
      return "FP16";
    case ScalarType::kBFloat16:
      return "BF16";
    case ScalarType::kFloat:
      return "FP32";
    case ScalarType::kDouble:
      return "FP64";
    default:
      return "";
  }
}

namespace {

// The KServe form of value `meta` (input or output `index`); NotSupported when none.
Result<TensorSpec> spec_of(const ValueMeta& meta, const char* role, size_t index) {
  TensorSpec t;
  t.name = fmt::format("{}__{}", role, index);
  t.index = index;
  t.kind = meta.kind;
  switch (meta.kind) {
    case ValueKind::kInt:
      t.dtype = ScalarType::kLong;
      break;
    case ValueKind::kDouble:
      t.dtype = ScalarType::kDouble;
      break;
    case ValueKind::kBool:
      t.dtype = ScalarType::kBool;
      break;
    case ValueKind::kTensor:
      if (!meta.tensor)
        return not_supported(fmt::format("{} {}: a tensor without metadata", role, index));
      t.dtype = meta.tensor->dtype;
      break;
    default:
      return not_supported(fmt::format(
          "{} {} is a {}, which KServe tensors cannot carry (use et-serverd's own protocol)", role,
          index, value_kind_name(meta.kind)));
  }
  t.datatype = std::string(datatype_name(t.dtype));
  if (t.datatype.empty()) {
    return not_supported(fmt::format("{} {} has dtype {}, which KServe has no datatype for", role,
                                     index, scalar_type_name(t.dtype)));
  }
  if (meta.kind != ValueKind::kTensor) {
    t.shape = t.max_shape = {1};
    return t;
  }
  t.dim_order = meta.tensor->dim_order;
  for (int32_t s : meta.tensor->sizes) {
    t.max_shape.push_back(s);
    t.shape.push_back(meta.tensor->is_dynamic ? -1 : s);
  }
  return t;
}

}  // namespace

Result<std::shared_ptr<Model>> Model::create(Core& core, std::string name, std::string version,
                                             std::string program_model,
                                             std::shared_ptr<const SharedProgram> program,
                                             std::string method, size_t max_instances) {
  auto m = std::shared_ptr<Model>(new Model(core));
  m->name_ = std::move(name);
  m->version_ = std::move(version);
  m->program_model_ = std::move(program_model);
  m->method_ = std::move(method);
  m->program_ = std::move(program);
  m->max_instances_ = std::max<size_t>(max_instances, 1);
  ET_ASSIGN_OR_RETURN(const MethodMeta* meta, m->program_->program->method_meta(m->method_));
  m->method_inputs_ = meta->inputs.size();
  for (size_t i = 0; i < meta->inputs.size(); ++i) {
    if (meta->inputs[i].kind == ValueKind::kNone) continue;  // passed as None
    ET_ASSIGN_OR_RETURN(TensorSpec t, spec_of(meta->inputs[i], "input", i));
    m->inputs_.push_back(std::move(t));
  }
  for (size_t i = 0; i < meta->outputs.size(); ++i) {
    ET_ASSIGN_OR_RETURN(TensorSpec t, spec_of(meta->outputs[i], "output", i));
    m->outputs_.push_back(std::move(t));
  }
  ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> first,
                      core.load_instance(m->program_, m->method_));
  MutexLock lock(m->mu_);
  m->instances_.push_back({std::move(first), 0});
  return m;
}

Model::Lease::Lease(Lease&& other) noexcept : model_(other.model_), slot_(std::move(other.slot_)) {}

Model::Lease::~Lease() {
  if (!slot_) return;
  MutexLock lock(model_->mu_);
  for (Instance& i : model_->instances_) {
    if (i.slot == slot_) --i.users;
  }
}

Result<Model::Lease> Model::lease() {
  {
    MutexLock lock(mu_);
    for (Instance& i : instances_) {
      if (i.users == 0) {
        ++i.users;
        return Lease(*this, i.slot);
      }
    }
    if (instances_.size() + creating_ >= max_instances_ || instances_.empty()) {
      auto least =
          std::min_element(instances_.begin(), instances_.end(),
                           [](const Instance& a, const Instance& b) { return a.users < b.users; });
      ++least->users;
      return Lease(*this, least->slot);
    }
    ++creating_;
  }
  auto slot = core_.load_instance(program_, method_);
  MutexLock lock(mu_);
  --creating_;
  if (!slot.ok()) return slot.status().with_context(fmt::format("model '{}'", name_));
  instances_.push_back({*slot, 1});
  return Lease(*this, std::move(slot).value());
}

void Model::record(bool ok, const CallTimes& t, uint64_t total_ns) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  MutexLock lock(mu_);
  if (!ok) {
    stats_.fail.add(total_ns);
    return;
  }
  stats_.success.add(total_ns);
  stats_.queue.add(t.queued_ns);
  stats_.compute_input.add(t.input_ns);
  stats_.compute_infer.add(t.infer_ns);
  stats_.compute_output.add(t.output_ns);
  ++stats_.inference_count;
  ++stats_.execution_count;
  stats_.last_inference_ms =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

ModelStats Model::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

size_t Model::instances() const {
  MutexLock lock(mu_);
  return instances_.size();
}

}  // namespace et::server::kserve
