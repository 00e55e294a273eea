#include "runtime/core/program.h"

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/core/printable.h"
#include "runtime/core/program_verifier.h"
#include "runtime/schema/program_generated.h"

namespace et {
namespace {

constexpr int8_t kDataLocationInline = 0;
constexpr int8_t kTensorDataExternal = 1;  // ExtraTensorInfo.location: in the .ptd

// Flatbuffer verifier limits: generous for real programs (MobileNetV2 has ~700 values),
// small enough that a hostile file cannot make verification run away.
constexpr flatbuffers::uoffset_t kMaxDepth = 64;
constexpr flatbuffers::uoffset_t kMaxTables = 50'000'000;

Result<ValueMeta> value_meta(const fb::ExecutionPlan& plan, int32_t index) {
  const fb::EValue* v = plan.values()->Get(static_cast<uint32_t>(index));
  ValueMeta meta;
  switch (v->val_type()) {
    case fb::KernelTypes::Tensor: {
      const fb::Tensor* t = v->val_as_Tensor();
      TensorMeta tm;
      ET_ASSIGN_OR_RETURN(tm.dtype, scalar_type_from_code(t->scalar_type()));
      if (t->sizes()) tm.sizes.assign(t->sizes()->begin(), t->sizes()->end());
      if (t->dim_order()) tm.dim_order.assign(t->dim_order()->begin(), t->dim_order()->end());
      tm.nbytes = declared_nbytes(*t);
      tm.is_memory_planned = t->allocation_info() != nullptr || t->data_buffer_idx() != 0;
      tm.is_dynamic = t->shape_dynamism() != 0;
      if (const fb::ExtraTensorInfo* extra = t->extra_tensor_info()) {
        tm.device = static_cast<DeviceType>(extra->device_type());
        tm.device_index = extra->device_index();
      }
      meta.kind = ValueKind::kTensor;
      meta.tensor = std::move(tm);
      break;
    }
    case fb::KernelTypes::Int:
      meta.kind = ValueKind::kInt;
      meta.traced = Value::from_int(v->val_as_Int()->int_val());
      break;
    case fb::KernelTypes::Bool:
      meta.kind = ValueKind::kBool;
      meta.traced = Value::from_bool(v->val_as_Bool()->bool_val());
      break;
    case fb::KernelTypes::Double:
      meta.kind = ValueKind::kDouble;
      meta.traced = Value::from_double(v->val_as_Double()->double_val());
      break;
    case fb::KernelTypes::String:
      meta.kind = ValueKind::kString;
      meta.traced = Value::from_string(v->val_as_String()->string_val()->string_view());
      break;
    case fb::KernelTypes::Null:
      meta.kind = ValueKind::kNone;
      break;
    default:
      return not_supported(fmt::format("a method input or output of value type {} (value {})",
                                       fb::EnumNameKernelTypes(v->val_type()), index));
  }
  return meta;
}

// Every tensor value that carries a fully qualified name, in value-table order (as
// ExecuTorch's MethodMeta counts attributes).
Status collect_attributes(const fb::ExecutionPlan& plan, std::vector<AttributeMeta>& out) {
  if (plan.values() == nullptr) return Status();
  for (uint32_t i = 0; i < plan.values()->size(); ++i) {
    const fb::EValue* v = plan.values()->Get(i);
    if (v->val_type() != fb::KernelTypes::Tensor) continue;
    const fb::ExtraTensorInfo* extra = v->val_as_Tensor()->extra_tensor_info();
    if (extra == nullptr || extra->fully_qualified_name() == nullptr) continue;
    ET_ASSIGN_OR_RETURN(ValueMeta meta, value_meta(plan, static_cast<int32_t>(i)));
    out.push_back(AttributeMeta{extra->fully_qualified_name()->str(), std::move(*meta.tensor),
                                static_cast<int32_t>(i)});
  }
  return Status();
}

}  // namespace

Result<std::shared_ptr<const void>> BackendCache::get_or_create(
    const std::string& key,
    const std::function<Result<std::shared_ptr<const void>>()>& make) const {
  MutexLock lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) return it->second;
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const void> made, make());
  entries_.emplace(key, made);
  return made;
}

size_t BackendCache::size() const {
  MutexLock lock(mu_);
  return entries_.size();
}

Result<std::shared_ptr<const Program>> Program::load(std::shared_ptr<const ProgramBytes> bytes,
                                                     std::shared_ptr<const DataFile> data) {
  if (bytes == nullptr) return invalid_argument("no program bytes");
  if (!is_bundled_program(bytes->bytes())) {
    ET_ASSIGN_OR_RETURN(std::shared_ptr<Program> program,
                        load_plain(std::move(bytes), std::move(data)));
    return std::shared_ptr<const Program>(std::move(program));
  }
  ET_ASSIGN_OR_RETURN(BundledProgramParts parts, parse_bundled_program(std::move(bytes)));
  auto program = load_plain(std::move(parts.program), std::move(data));
  if (!program.ok()) return program.status().with_context("the program inside the bundle");
  for (const BundledMethodSuite& suite : parts.tests->suites) {
    if (!(*program)->method_meta(suite.method).ok()) {
      return invalid_program(fmt::format(
          "the bundled program's tests: they test method '{}', which the program does not "
          "have; it has: {}",
          printable(suite.method), fmt::join((*program)->method_names(), ", ")));
    }
  }
  (*program)->bundled_ = std::move(parts.tests);
  return std::shared_ptr<const Program>(std::move(program).value());
}

Result<std::shared_ptr<Program>> Program::load_plain(std::shared_ptr<const ProgramBytes> bytes,
                                                     std::shared_ptr<const DataFile> data) {
  const std::span<const uint8_t> file = bytes->bytes();
  ET_ASSIGN_OR_RETURN(PteHeader header, parse_pte_header(file));

  if (header.program_size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    // The flatbuffer verifier asserts on buffers this large (debug builds abort).
    return invalid_program(
        fmt::format("the program's flatbuffer is {} bytes; flatbuffers reads at most {}",
                    header.program_size, FLATBUFFERS_MAX_BUFFER_SIZE - 1));
  }
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxDepth;
  options.max_tables = kMaxTables;
  flatbuffers::Verifier verifier(file.data(), header.program_size, options);
  if (!verifier.VerifyBuffer<fb::Program>(kProgramIdentifier.data())) {
    return invalid_program(
        "the program's flatbuffer is malformed (a table, vector or string lies outside the "
        "file or is misaligned): the file is corrupt or truncated");
  }
  const fb::Program* root = flatbuffers::GetRoot<fb::Program>(file.data());
  ET_RETURN_IF_ERROR(verify_program(*root, file, header, data.get()));

  auto program = std::shared_ptr<Program>(new Program());
  program->bytes_ = std::move(bytes);
  program->data_ = std::move(data);
  program->header_ = header;
  program->root_ = root;
  ET_RETURN_IF_ERROR(program->build_metas());
  return program;
}

Result<std::shared_ptr<const Program>> Program::load_file(const std::string& path,
                                                          const std::string& data_path) {
  std::shared_ptr<const DataFile> data;
  if (!data_path.empty()) {
    ET_ASSIGN_OR_RETURN(data, DataFile::load_file(data_path));
  }
  ET_ASSIGN_OR_RETURN(auto bytes, ProgramBytes::map_file(path));
  auto program = load(std::move(bytes), std::move(data));
  if (!program.ok()) return program.status().with_context(path);
  return program;
}

Status Program::build_metas() {
  for (const fb::ExecutionPlan* plan : *root_->execution_plan()) {
    MethodMeta meta;
    meta.name = plan->name()->str();
    if (plan->inputs()) {
      for (int32_t index : *plan->inputs()) {
        ET_ASSIGN_OR_RETURN(ValueMeta v, value_meta(*plan, index));
        meta.inputs.push_back(std::move(v));
      }
    }
    if (plan->outputs()) {
      for (int32_t index : *plan->outputs()) {
        ET_ASSIGN_OR_RETURN(ValueMeta v, value_meta(*plan, index));
        meta.outputs.push_back(std::move(v));
      }
    }
    if (plan->non_const_buffer_sizes()) {
      meta.planned_buffer_sizes.assign(plan->non_const_buffer_sizes()->begin(),
                                       plan->non_const_buffer_sizes()->end());
    }
    if (plan->operators()) {
      for (const fb::Operator* op : *plan->operators()) {
        std::string name = op->name()->str();
        if (op->overload() && op->overload()->size() > 0) name += "." + op->overload()->str();
        meta.operators.push_back(std::move(name));
      }
    }
    if (plan->delegates()) {
      for (const fb::BackendDelegate* d : *plan->delegates())
        meta.backends.push_back(d->id()->str());
    }
    ET_RETURN_IF_ERROR(collect_attributes(*plan, meta.attributes));
    if (const fb::ContainerMetadata* c = plan->container_meta_type()) {
      if (c->encoded_inp_str()) meta.input_spec = c->encoded_inp_str()->str();
      if (c->encoded_out_str()) meta.output_spec = c->encoded_out_str()->str();
    }
    metas_.push_back(std::move(meta));
  }
  return Status();
}

Status Program::check_data_given(std::string_view method) const {
  if (data_ != nullptr) return Status();
  for (const fb::ExecutionPlan* plan : *root_->execution_plan()) {
    if (plan->values() == nullptr || (!method.empty() && plan->name()->string_view() != method)) {
      continue;
    }
    for (const fb::EValue* v : *plan->values()) {
      if (v->val_type() != fb::KernelTypes::Tensor) continue;
      const fb::ExtraTensorInfo* extra = v->val_as_Tensor()->extra_tensor_info();
      if (extra == nullptr || extra->location() != kTensorDataExternal) continue;
      return invalid_argument(fmt::format(
          "method '{}' cannot load: tensor '{}' is kept in an external data file (.ptd) and "
          "none was given: load the program with the .ptd exported beside it (et-run --data "
          "FILE.ptd; Python load_program(path, data_path=...); C++ load_program(path, "
          "data_path))",
          plan->name()->string_view(), printable(extra->fully_qualified_name()->string_view())));
    }
  }
  return Status();
}

std::vector<std::string> Program::method_names() const {
  std::vector<std::string> names;
  for (const auto& m : metas_) names.push_back(m.name);
  return names;
}

Result<const MethodMeta*> Program::method_meta(std::string_view name) const {
  for (const auto& m : metas_) {
    if (m.name == name) return &m;
  }
  return not_found(fmt::format("the program has no method '{}'; it has: {}", name,
                               fmt::join(method_names(), ", ")));
}

uint32_t Program::version() const { return root_->version(); }

Result<const fb::ExecutionPlan*> Program::plan(std::string_view name) const {
  for (const fb::ExecutionPlan* plan : *root_->execution_plan()) {
    if (plan->name()->string_view() == name) return plan;
  }
  return method_meta(name).status();
}

std::span<const uint8_t> Program::segment(uint32_t index) const {
  const fb::DataSegment* s = root_->segments()->Get(index);
  return bytes().subspan(header_.segment_base_offset + s->offset(), s->size());
}

std::span<const uint8_t> Program::constant_data(uint32_t index) const {
  const fb::SubsegmentOffsets* constants = root_->constant_segment();
  if (constants != nullptr && constants->offsets() && constants->offsets()->size() > 0) {
    return segment(constants->segment_index()).subspan(constants->offsets()->Get(index));
  }
  const auto* storage = root_->constant_buffer()->Get(index)->storage();
  if (storage == nullptr) return {};
  return {storage->data(), storage->size()};
}

std::span<const uint8_t> Program::mutable_initial_data(uint32_t index) const {
  const fb::SubsegmentOffsets* sub = root_->mutable_data_segments()->Get(0);
  return segment(sub->segment_index()).subspan(sub->offsets()->Get(index));
}

std::span<const uint8_t> Program::delegate_payload(const fb::BackendDelegate& delegate) const {
  const fb::BackendDelegateDataReference* ref = delegate.processed();
  if (ref->location() == kDataLocationInline) {
    const auto* data = root_->backend_delegate_data()->Get(ref->index())->data();
    return {data->data(), data->size()};
  }
  return segment(ref->index());
}

Result<std::span<const uint8_t>> Program::named_data(std::string_view key) const {
  if (root_->named_data()) {
    for (const fb::NamedData* d : *root_->named_data()) {
      if (d->key()->string_view() == key) return segment(d->segment_index());
    }
  }
  if (data_ != nullptr) {
    if (auto found = data_->find(key); found.ok()) return found;
    return not_found(
        fmt::format("neither the program nor its external data file has named data '{}'", key));
  }
  return not_found(fmt::format(
      "the program has no named data '{}' (if it was exported with its weights in a .ptd "
      "file, load it with that file)",
      key));
}

std::span<const uint8_t> Program::external_data(std::string_view name) const {
  Result<std::span<const uint8_t>> found = data_->find(name);
  return found.value();
}

}  // namespace et
