#include "runtime/core/method.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <set>

#include "runtime/core/exceptions.h"
#include "runtime/core/printable.h"
#include "runtime/core/profile.h"
#include "runtime/core/program_verifier.h"
#include "runtime/schema/program_generated.h"

namespace et {
namespace {

constexpr int8_t kTensorDataExternal = 1;  // ExtraTensorInfo.location: in the .ptd

using Buffer = std::unique_ptr<uint8_t, void (*)(void*)>;

// Zeroed memory (calloc: large blocks are fresh zero pages, not touched here), so no
// method can read what another left behind.
Result<Buffer> zeroed_buffer(size_t nbytes, std::string_view what) {
  void* p = std::calloc(nbytes == 0 ? 1 : nbytes, 1);
  if (p == nullptr) {
    return resource_exhausted(fmt::format("cannot allocate {} bytes for {}", nbytes, what));
  }
  return Buffer(static_cast<uint8_t*>(p), &std::free);
}

// Writes a zero into every page of `data` (already zero): a read would map the shared
// zero page and leave the real fault for the first write.
void touch_pages(uint8_t* data, size_t nbytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t at = 0; at < nbytes; at += page) {
    reinterpret_cast<volatile uint8_t*>(data)[at] = 0;
  }
}

const fb::ExecutionPlan& as_plan(const void* p) {
  return *static_cast<const fb::ExecutionPlan*>(p);
}

bool values_equal(const Value& traced, const InputValue& given) {
  switch (traced.kind()) {
    case ValueKind::kInt:
      return given.int_value == traced.to_int();
    case ValueKind::kDouble:
      return given.double_value == traced.to_double();
    case ValueKind::kBool:
      return given.bool_value == traced.to_bool();
    default:
      return true;
  }
}

std::string scalar_string(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kInt:
      return std::to_string(v.to_int());
    case ValueKind::kDouble:
      return fmt::format("{}", v.to_double());
    case ValueKind::kBool:
      return v.to_bool() ? "True" : "False";
    default:
      return std::string(value_kind_name(v.kind()));
  }
}

std::string given_string(const InputValue& v) {
  switch (v.kind) {
    case ValueKind::kInt:
      return std::to_string(v.int_value);
    case ValueKind::kDouble:
      return fmt::format("{}", v.double_value);
    case ValueKind::kBool:
      return v.bool_value ? "True" : "False";
    default:
      return std::string(value_kind_name(v.kind));
  }
}

// NotSupported when the plan puts a planned buffer on a device: this runtime allocates
// host memory only.
Status check_buffers_on_host(const fb::ExecutionPlan& plan, std::string_view name) {
  if (plan.non_const_buffer_device() == nullptr) return Status();
  for (const fb::NonConstBufferDevice* d : *plan.non_const_buffer_device()) {
    if (d == nullptr || d->device_type() == 0) continue;
    return not_supported(fmt::format(
        "method '{}' plans its buffer {} on device {}:{}; this runtime runs programs on the "
        "CPU and allocates no device memory (export without "
        "ExecutorchBackendConfig(enable_non_cpu_memory_planning=True))",
        name, d->buffer_idx(),
        d->device_type() == 1 ? "cuda" : "device type " + std::to_string(d->device_type()),
        d->device_index()));
  }
  return Status();
}

}  // namespace

struct Method::Step {
  enum class Kind : uint8_t { kKernel, kDelegate, kMove, kJumpFalse, kFree };
  Kind kind = Kind::kKernel;
  KernelFn fn = nullptr;
  uint32_t target = 0;  // op_names_ index (kernel) or delegates_ index (delegate)
  std::vector<Value*> args;
  int32_t a = 0;  // move source, jump condition, freed value
  int32_t b = 0;  // move destination, jump destination
};

Method::~Method() = default;

Result<std::unique_ptr<Method>> Method::load(std::shared_ptr<const Program> program,
                                             std::string_view name, const MethodOptions& options) {
  if (program == nullptr) return invalid_argument("no program");
  const KernelRegistry& kernels = options.kernels ? *options.kernels : KernelRegistry::global();
  const BackendRegistry& backends =
      options.backends ? *options.backends : BackendRegistry::global();
  ET_ASSIGN_OR_RETURN(const MethodMeta* meta, program->method_meta(name));
  ET_ASSIGN_OR_RETURN(const fb::ExecutionPlan* plan, program->plan(name));
  ET_RETURN_IF_ERROR(check_buffers_on_host(*plan, name));
  ET_RETURN_IF_ERROR(program->check_data_given(name));

  uint64_t planned = 0;
  for (int64_t size : meta->planned_buffer_sizes) {
    if (size < 0 || __builtin_add_overflow(planned, static_cast<uint64_t>(size), &planned) ||
        planned > options.max_planned_bytes) {
      return resource_exhausted(
          fmt::format("method '{}' plans more memory than the limit of {} bytes", name,
                      options.max_planned_bytes));
    }
  }

  std::set<std::string> missing_ops;
  for (const std::string& op : meta->operators) {
    if (kernels.find(op) == nullptr) missing_ops.insert(op);
  }
  std::set<std::string> missing_backends;
  for (const std::string& id : meta->backends) {
    if (backends.find(id) == nullptr) missing_backends.insert(id);
  }
  if (!missing_ops.empty() || !missing_backends.empty()) {
    std::string message = fmt::format("method '{}' cannot load:", name);
    if (!missing_ops.empty()) {
      message += fmt::format(" it needs {} operator(s) this runtime does not have: {}.",
                             missing_ops.size(), fmt::join(missing_ops, ", "));
    }
    if (!missing_backends.empty()) {
      message += fmt::format(" It delegates to backend(s) this runtime does not have: {}.",
                             fmt::join(missing_backends, ", "));
    }
    return not_found(std::move(message));
  }

  auto method = std::unique_ptr<Method>(new Method());
  method->program_ = std::move(program);
  method->meta_ = meta;
  method->plan_ = plan;
  ET_RETURN_IF_ERROR(method->build_values().with_context(fmt::format("method '{}'", name)));
  ET_RETURN_IF_ERROR(
      method->build_steps(kernels, backends).with_context(fmt::format("method '{}'", name)));
  method->record_homes();
  method->planned_bytes_ = planned;
  if (options.prefault) {
    for (size_t i = 0; i < method->buffers_.size(); ++i) {
      touch_pages(method->buffers_[i].get(), static_cast<size_t>(meta->planned_buffer_sizes[i]));
    }
  }
  return method;
}

Status Method::build_values() {
  const fb::ExecutionPlan& plan = as_plan(plan_);
  for (int64_t size : meta_->planned_buffer_sizes) {
    ET_ASSIGN_OR_RETURN(Buffer b, zeroed_buffer(static_cast<size_t>(size), "planned memory"));
    buffers_.push_back(std::move(b));
  }

  if (plan.values() == nullptr)
    return Status();  // the verifier allows no values only with
                      // no inputs, outputs or instructions
  const uint32_t n = plan.values()->size();
  size_t n_tensors = 0, n_int_lists = 0, n_tensor_lists = 0;
  for (const fb::EValue* v : *plan.values()) {
    n_tensors += v->val_type() == fb::KernelTypes::Tensor;
    n_int_lists += v->val_type() == fb::KernelTypes::IntList;
    n_tensor_lists += v->val_type() == fb::KernelTypes::TensorList ||
                      v->val_type() == fb::KernelTypes::OptionalTensorList;
  }
  // Sized once: Values point into these vectors.
  tensors_.resize(n_tensors);
  int_lists_.resize(n_int_lists);
  tensor_lists_.resize(n_tensor_lists);
  values_.resize(n);

  size_t next_tensor = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const fb::EValue* v = plan.values()->Get(i);
    switch (v->val_type()) {
      case fb::KernelTypes::Int:
        values_[i] = Value::from_int(v->val_as_Int()->int_val());
        break;
      case fb::KernelTypes::Bool:
        values_[i] = Value::from_bool(v->val_as_Bool()->bool_val());
        break;
      case fb::KernelTypes::Double:
        values_[i] = Value::from_double(v->val_as_Double()->double_val());
        break;
      case fb::KernelTypes::String:
        values_[i] = Value::from_string(v->val_as_String()->string_val()->string_view());
        break;
      case fb::KernelTypes::DoubleList: {
        const auto* items = v->val_as_DoubleList()->items();
        values_[i] =
            Value::from_double_list(items ? std::span<const double>(items->data(), items->size())
                                          : std::span<const double>());
        break;
      }
      case fb::KernelTypes::BoolList: {
        const auto* items = v->val_as_BoolList()->items();
        // The verifier checked every byte is 0 or 1.
        values_[i] = Value::from_bool_list(
            items
                ? std::span<const bool>(reinterpret_cast<const bool*>(items->data()), items->size())
                : std::span<const bool>());
        break;
      }
      case fb::KernelTypes::Tensor: {
        const fb::Tensor* t = v->val_as_Tensor();
        std::span<const int32_t> sizes;
        if (t->sizes()) sizes = {t->sizes()->data(), t->sizes()->size()};
        std::span<const uint8_t> dim_order;
        if (t->dim_order()) dim_order = {t->dim_order()->data(), t->dim_order()->size()};
        Tensor& tensor = tensors_[next_tensor++];
        tensor = Tensor(static_cast<ScalarType>(t->scalar_type()), sizes, dim_order,
                        static_cast<ShapeDynamism>(t->shape_dynamism()));
        // Kept in the .ptd under its name (the verifier found it there, big enough).
        const fb::ExtraTensorInfo* extra = t->extra_tensor_info();
        const bool external = extra != nullptr && extra->location() == kTensorDataExternal;
        if (const fb::AllocationDetails* a = t->allocation_info()) {
          const uint64_t offset =
              (uint64_t{a->memory_offset_high()} << 32) | a->memory_offset_low();
          uint8_t* data = buffers_[a->memory_id()].get() + offset;
          // The verifier proved the upper-bound bytes fit the buffer at this offset.
          tensor.set_data(data, tensor.capacity_nbytes());
          if (external) {
            std::memcpy(
                data, program_->external_data(extra->fully_qualified_name()->string_view()).data(),
                tensor.capacity_nbytes());
          } else if (t->data_buffer_idx() > 0) {
            std::memcpy(data, program_->mutable_initial_data(t->data_buffer_idx()).data(),
                        tensor.capacity_nbytes());
          }
        } else if (external) {
          // Like constants below, shared by every instance and never written.
          const std::span<const uint8_t> bytes =
              program_->external_data(extra->fully_qualified_name()->string_view());
          tensor.set_data(const_cast<uint8_t*>(bytes.data()), bytes.size());
          tensor.set_constant(true);
        } else if (t->data_buffer_idx() > 0) {
          // Constants stay in the program's bytes, shared by every instance, never written.
          const std::span<const uint8_t> bytes = program_->constant_data(t->data_buffer_idx());
          tensor.set_data(const_cast<uint8_t*>(bytes.data()), bytes.size());
          tensor.set_constant(true);
        }
        values_[i] = Value::from_tensor(&tensor);
        break;
      }
      default:
        break;  // None, and lists (below)
    }
  }

  size_t next_int_list = 0, next_tensor_list = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const fb::EValue* v = plan.values()->Get(i);
    if (v->val_type() == fb::KernelTypes::IntList) {
      IntListStorage& list = int_lists_[next_int_list++];
      if (const auto* items = v->val_as_IntList()->items()) {
        for (int64_t item : *items) list.items.push_back(&values_[static_cast<size_t>(item)]);
      }
      values_[i] = Value::from_int_list(&list);
    } else if (v->val_type() == fb::KernelTypes::TensorList ||
               v->val_type() == fb::KernelTypes::OptionalTensorList) {
      const bool optional = v->val_type() == fb::KernelTypes::OptionalTensorList;
      const auto* items =
          optional ? v->val_as_OptionalTensorList()->items() : v->val_as_TensorList()->items();
      TensorListStorage& list = tensor_lists_[next_tensor_list++];
      if (items) {
        for (int32_t item : *items) {
          const bool none = item < 0 || !values_[static_cast<size_t>(item)].is_tensor();
          list.items.push_back(none ? nullptr : &values_[static_cast<size_t>(item)].to_tensor());
        }
      }
      values_[i] = Value::from_tensor_list(&list, optional);
    }
  }

  if (plan.inputs()) input_indices_.assign(plan.inputs()->begin(), plan.inputs()->end());
  if (plan.outputs()) output_indices_.assign(plan.outputs()->begin(), plan.outputs()->end());
  auto tensor_of = [this](int32_t index) {
    Value& v = values_[static_cast<size_t>(index)];
    return v.is_tensor() ? &v.to_tensor() : nullptr;
  };
  for (int32_t index : input_indices_) input_tensors_.push_back(tensor_of(index));
  for (int32_t index : output_indices_) output_tensors_.push_back(tensor_of(index));
  input_set_.assign(input_indices_.size(), false);
  input_copies_.clear();
  for (size_t i = 0; i < input_indices_.size(); ++i)
    input_copies_.emplace_back(nullptr, &std::free);
  output_buffer_set_.assign(output_indices_.size(), true);
  for (size_t i = 0; i < output_indices_.size(); ++i) {
    const Tensor* t = output_tensors_[i];
    if (t && t->data() == nullptr && !output_is_input(i) && t->capacity_nbytes() > 0) {
      output_buffer_set_[i] = false;
    }
  }
  return Status();
}

void Method::record_homes() {
  homes_.resize(tensors_.size());
  for (size_t k = 0; k < tensors_.size(); ++k) {
    homes_[k] = {tensors_[k].mutable_data(), tensors_[k].capacity(), tensors_[k].is_constant()};
  }
  for (const std::vector<Step>& chain : chains_) {
    for (const Step& step : chain) {
      if (step.kind == Step::Kind::kMove) move_targets_.emplace_back(step.b, values_[step.b]);
    }
  }
}

void Method::set_home(Tensor& tensor, void* data, size_t capacity) {
  homes_[static_cast<size_t>(&tensor - tensors_.data())] = {data, capacity, false};
}

void Method::undo_execution_changes() {
  if (moved_) {
    for (const auto& [index, value] : move_targets_) values_[static_cast<size_t>(index)] = value;
    moved_ = false;
  }
  for (Tensor* t : rebound_) {
    const Home& home = homes_[static_cast<size_t>(t - tensors_.data())];
    // set_data() leaves a tensor whose shape no longer fits its home with no memory.
    t->set_data(home.data, home.capacity);
    t->set_constant(home.constant);
  }
  rebound_.clear();
}

Status Method::build_steps(const KernelRegistry& kernels, const BackendRegistry& backends) {
  const fb::ExecutionPlan& plan = as_plan(plan_);
  for (const std::string& op : meta_->operators) op_names_.push_back(op);

  if (plan.delegates()) {
    for (uint32_t d = 0; d < plan.delegates()->size(); ++d) {
      const fb::BackendDelegate* delegate = plan.delegates()->Get(d);
      std::shared_ptr<const Backend> backend = backends.find(delegate->id()->string_view());
      DelegateSpec spec;
      spec.program = program_.get();
      spec.method = meta_->name;
      spec.delegate_index = d;
      spec.payload = program_->delegate_payload(*delegate);
      if (delegate->compile_specs()) {
        for (const fb::CompileSpec* cs : *delegate->compile_specs()) {
          std::span<const uint8_t> value;
          if (cs->value()) value = {cs->value()->data(), cs->value()->size()};
          spec.compile_specs.emplace_back(cs->key() ? cs->key()->string_view() : "", value);
        }
      }
      auto instance = backend->init(spec);
      if (!instance.ok()) {
        return instance.status().with_context(
            fmt::format("delegate {} ({})", d, delegate->id()->string_view()));
      }
      delegates_.push_back(std::move(instance).value());
    }
  }

  if (!plan.chains()) return Status();
  for (const fb::Chain* chain : *plan.chains()) {
    std::vector<Step>& steps = chains_.emplace_back();
    if (!chain->instructions()) continue;
    for (const fb::Instruction* instr : *chain->instructions()) {
      Step step;
      auto take_args = [&](const flatbuffers::Vector<int32_t>* args) {
        if (!args) return;
        for (int32_t a : *args) step.args.push_back(&values_[static_cast<size_t>(a)]);
      };
      switch (instr->instr_args_type()) {
        case fb::InstructionArguments::KernelCall: {
          const fb::KernelCall* k = instr->instr_args_as_KernelCall();
          step.kind = Step::Kind::kKernel;
          step.target = static_cast<uint32_t>(k->op_index());
          step.fn = kernels.find(op_names_[step.target]);
          take_args(k->args());
          break;
        }
        case fb::InstructionArguments::DelegateCall: {
          const fb::DelegateCall* d = instr->instr_args_as_DelegateCall();
          step.kind = Step::Kind::kDelegate;
          step.target = static_cast<uint32_t>(d->delegate_index());
          take_args(d->args());
          break;
        }
        case fb::InstructionArguments::MoveCall:
          step.kind = Step::Kind::kMove;
          step.a = instr->instr_args_as_MoveCall()->move_from();
          step.b = instr->instr_args_as_MoveCall()->move_to();
          break;
        case fb::InstructionArguments::JumpFalseCall:
          step.kind = Step::Kind::kJumpFalse;
          step.a = instr->instr_args_as_JumpFalseCall()->cond_value_index();
          step.b = instr->instr_args_as_JumpFalseCall()->destination_instruction();
          break;
        case fb::InstructionArguments::FreeCall:
          step.kind = Step::Kind::kFree;
          step.a = instr->instr_args_as_FreeCall()->value_index();
          break;
        default:
          return internal_error("unverified instruction type");  // the verifier refuses these
      }
      steps.push_back(std::move(step));
    }
  }
  return Status();
}

bool Method::output_is_input(size_t index) const {
  return std::find(input_indices_.begin(), input_indices_.end(), output_indices_[index]) !=
         input_indices_.end();
}

Status Method::set_input(size_t index, const InputValue& input) {
  has_outputs_ = false;
  undo_execution_changes();
  if (index >= input_indices_.size()) {
    return invalid_argument(fmt::format("input {} does not exist: method '{}' takes {} input(s)",
                                        index, meta_->name, input_indices_.size()));
  }
  input_set_[index] = false;
  const ValueMeta& declared = meta_->inputs[index];
  if (input.kind != declared.kind) {
    return invalid_argument(fmt::format("input {} is {} but method '{}' expects {}", index,
                                        value_kind_name(input.kind), meta_->name,
                                        value_kind_name(declared.kind)));
  }
  if (declared.kind == ValueKind::kTensor) {
    ET_RETURN_IF_ERROR(bind_tensor_input(index, input.tensor));
  } else if (declared.kind == ValueKind::kString) {
    return not_supported(fmt::format("input {} is a string input, which cannot be set", index));
  } else if (!values_equal(declared.traced, input)) {
    return invalid_argument(fmt::format(
        "input {} is {} {}, but the method was exported with the value {} and accepts only "
        "that: pass {} or re-export with the value you need",
        index, value_kind_name(input.kind), given_string(input), scalar_string(declared.traced),
        scalar_string(declared.traced)));
  }
  input_set_[index] = true;
  return Status();
}

Status Method::bind_tensor_input(size_t index, const TensorView& view) {
  Tensor& tensor = *input_tensors_[index];
  ET_RETURN_IF_ERROR(check_tensor_input(index, tensor, view));
  auto bind = [&](void* data, size_t capacity) {
    return tensor.bind(data, capacity, view.sizes).with_context(fmt::format("input {}", index));
  };
  if (meta_->inputs[index].tensor->is_memory_planned) {
    // Its home is the method's planned memory (the execute's changes are undone).
    ET_RETURN_IF_ERROR(bind(tensor.mutable_data(), tensor.capacity()));
    if (tensor.nbytes() > 0) std::memcpy(tensor.mutable_data(), view.data, tensor.nbytes());
    return Status();
  }
  if (view.writable) {
    // Backed by exactly the caller's bytes: a kernel cannot grow it past them.
    ET_RETURN_IF_ERROR(bind(view.data, view.nbytes));
    set_home(tensor, view.data, view.nbytes);
    return Status();
  }
  // Read-only caller memory: the program may write its input, so it gets a copy.
  Buffer& copy = input_copies_[index];
  if (copy == nullptr) {
    ET_ASSIGN_OR_RETURN(copy, zeroed_buffer(tensor.capacity_nbytes(), "a read-only input's copy"));
  }
  ET_RETURN_IF_ERROR(bind(copy.get(), tensor.capacity_nbytes()));
  if (tensor.nbytes() > 0) std::memcpy(copy.get(), view.data, tensor.nbytes());
  set_home(tensor, copy.get(), tensor.capacity_nbytes());
  return Status();
}

Status Method::set_inputs(std::span<const InputValue> inputs) {
  has_outputs_ = false;
  undo_execution_changes();
  if (inputs.size() != input_indices_.size()) {
    std::fill(input_set_.begin(), input_set_.end(), false);
    return invalid_argument(fmt::format("method '{}' takes {} input(s), got {}", meta_->name,
                                        input_indices_.size(), inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Status s = set_input(i, inputs[i]); !s.ok()) {
      std::fill(input_set_.begin(), input_set_.end(), false);
      return s;
    }
  }
  return Status();
}

Status Method::set_output_buffer(size_t index, void* data, size_t nbytes) {
  has_outputs_ = false;
  if (index >= output_indices_.size()) {
    return invalid_argument(fmt::format("output {} does not exist: method '{}' has {} output(s)",
                                        index, meta_->name, output_indices_.size()));
  }
  const ValueMeta& declared = meta_->outputs[index];
  if (declared.kind != ValueKind::kTensor || declared.tensor->is_memory_planned ||
      output_is_input(index)) {
    return invalid_argument(fmt::format(
        "output {} is memory-planned (or is an input): the method owns its memory", index));
  }
  undo_execution_changes();
  Tensor& tensor = *output_tensors_[index];
  if (data == nullptr || nbytes < tensor.capacity_nbytes()) {
    return invalid_argument(fmt::format("output {} needs a buffer of {} bytes, got {}", index,
                                        tensor.capacity_nbytes(), data == nullptr ? 0 : nbytes));
  }
  tensor.set_data(data, nbytes);
  set_home(tensor, data, nbytes);
  output_buffer_set_[index] = true;
  return Status();
}

Status Method::execute(const ExecuteLimits& limits, ExecuteProfile* profile) {
  has_outputs_ = false;
  std::vector<size_t> unset;
  for (size_t i = 0; i < input_set_.size(); ++i) {
    if (!input_set_[i]) unset.push_back(i);
  }
  if (!unset.empty()) {
    return failed_precondition(
        fmt::format("method '{}' cannot execute: input(s) {} not set; set all {} inputs first",
                    meta_->name, fmt::join(unset, ", "), input_set_.size()));
  }
  for (size_t i = 0; i < output_buffer_set_.size(); ++i) {
    if (!output_buffer_set_[i]) {
      return failed_precondition(fmt::format(
          "method '{}' cannot execute: output {} is not memory-planned and has no buffer; "
          "give it one with set_output_buffer()",
          meta_->name, i));
    }
  }
  undo_execution_changes();
  uint64_t budget = limits.max_instructions;  // for all chains together
  // Two instantiations of run_chain: the unprofiled one has no profiling code at all.
  if (profile == nullptr) {
    for (size_t c = 0; c < chains_.size(); ++c) {
      ET_RETURN_IF_ERROR(run_chain<false>(c, limits, budget, nullptr));
    }
  } else {
    *profile = ExecuteProfile{};
    profile->method = meta_->name;
    profile->start_ns = profile_clock_ns();
    Status status;
    for (size_t c = 0; c < chains_.size() && status.ok(); ++c) {
      status = run_chain<true>(c, limits, budget, profile);
    }
    profile->end_ns = profile_clock_ns();
    ET_RETURN_IF_ERROR(status);
  }
  has_outputs_ = true;
  return Status();
}

std::string Method::tensor_args(const Step& step) {
  std::string out;
  for (size_t i = 0; i < step.args.size(); ++i) {
    const Value* v = step.args[i];
    // An out variant names its output twice (the out argument, then the result).
    if (!v->is_tensor() || std::find(step.args.begin(), step.args.begin() + static_cast<long>(i),
                                     v) != step.args.begin() + static_cast<long>(i)) {
      continue;
    }
    const Tensor& t = v->to_tensor();
    fmt::format_to(std::back_inserter(out), "{}{}[{}]", out.empty() ? "" : ", ",
                   scalar_type_name(t.dtype()), fmt::join(t.sizes(), ", "));
  }
  return out;
}

template <bool kProfiled>
Status Method::run_chain(size_t c, const ExecuteLimits& limits, uint64_t& budget,
                         ExecuteProfile* profile) {
  const std::vector<Step>& steps = chains_[c];
  const bool timed = limits.deadline != std::chrono::steady_clock::time_point::max();
  size_t pc = 0;
  while (pc < steps.size()) {
    if (budget-- == 0) {
      return resource_exhausted(
          fmt::format("method '{}' ran {} instructions without finishing (the limit per execute; "
                      "et-serverd --max-instructions)",
                      meta_->name, limits.max_instructions));
    }
    if (limits.cancelled && limits.cancelled->load(std::memory_order_relaxed)) {
      return unavailable(
          fmt::format("method '{}' was stopped at instruction {}:{}: its caller went away",
                      meta_->name, c, pc));
    }
    // The clock is read every 16 instructions: a call of a few hundred small kernels
    // should not pay a clock read for each (the fast path's budget is microseconds).
    if ((budget & 15) == 0) {
      if (timed && std::chrono::steady_clock::now() > limits.deadline) {
        return deadline_exceeded(fmt::format(
            "method '{}' ran past its execution deadline and was stopped at instruction {}:{}",
            meta_->name, c, pc));
      }
      if (limits.caller_gone != nullptr && limits.caller_gone(limits.caller_gone_arg)) {
        return unavailable(
            fmt::format("method '{}' was stopped at instruction {}:{}: its caller went away",
                        meta_->name, c, pc));
      }
    }
    const Step& step = steps[pc];
    size_t next = pc + 1;
    Status status;
    switch (step.kind) {
      case Step::Kind::kKernel: {
        KernelContext ctx(op_names_[step.target], step.args, &temp_, &rebound_);
        const int64_t started = kProfiled ? profile_clock_ns() : 0;
        status = catch_exceptions("", [&] { return step.fn(ctx); });
        if constexpr (kProfiled) {
          const int64_t ended = profile_clock_ns();
          if (profile->events.size() >= ExecuteProfile::kMostEvents) {
            ++profile->dropped_events;
          } else {
            ProfileEvent& e = profile->events.emplace_back();
            e.start_ns = started;
            e.end_ns = ended;
            e.name = op_names_[step.target];
            e.chain = static_cast<uint32_t>(c);
            e.instruction = static_cast<uint32_t>(pc);
            e.args = tensor_args(step);
          }
        }
        temp_.reset();
        if (rebound_.size() > 2 * tensors_.size() + 64) {
          // A loop re-views the same tensors: keep the list as long as the method's.
          std::sort(rebound_.begin(), rebound_.end());
          rebound_.erase(std::unique(rebound_.begin(), rebound_.end()), rebound_.end());
        }
        if (!status.ok()) {
          const std::string& op = op_names_[step.target];
          const bool named = status.message().rfind(op, 0) == 0;
          return status.with_context(
              named ? fmt::format("method '{}', instruction {}:{}", meta_->name, c, pc)
                    : fmt::format("method '{}', instruction {}:{} ({})", meta_->name, c, pc, op));
        }
        break;
      }
      case Step::Kind::kDelegate: {
        KernelContext ctx(meta_->backends[step.target], step.args, &temp_, &rebound_);
        if (kProfiled && profile->events.size() >= ExecuteProfile::kMostEvents) {
          ++profile->dropped_events;
          status = catch_exceptions("", [&] { return delegates_[step.target]->execute(ctx); });
        } else if constexpr (kProfiled) {
          // The call's event comes before the steps the delegate reports.
          const size_t event = profile->events.size();
          ProfileEvent& e = profile->events.emplace_back();
          e.kind = ProfileEvent::Kind::kDelegate;
          e.name = meta_->backends[step.target];
          e.args = fmt::format("delegate {}", step.target);
          e.chain = static_cast<uint32_t>(c);
          e.instruction = static_cast<uint32_t>(pc);
          DelegateProfile steps_of_call(*profile, e.chain, e.instruction);
          DelegateProfileScope scope(&steps_of_call);
          e.start_ns = profile_clock_ns();
          status = catch_exceptions("", [&] { return delegates_[step.target]->execute(ctx); });
          profile->events[event].end_ns = profile_clock_ns();
        } else {
          status = catch_exceptions("", [&] { return delegates_[step.target]->execute(ctx); });
        }
        temp_.reset();
        if (!status.ok()) {
          return status.with_context(fmt::format("method '{}', instruction {}:{} (delegate {})",
                                                 meta_->name, c, pc, step.target));
        }
        break;
      }
      case Step::Kind::kMove:
        values_[static_cast<size_t>(step.b)] = values_[static_cast<size_t>(step.a)];
        moved_ = true;
        break;
      case Step::Kind::kJumpFalse: {
        const Value& cond = values_[static_cast<size_t>(step.a)];
        bool truth = false;
        if (cond.is_bool()) {
          truth = cond.to_bool();
        } else if (cond.is_tensor() && cond.to_tensor().dtype() == ScalarType::kBool &&
                   cond.to_tensor().data() != nullptr) {
          const Tensor& t = cond.to_tensor();
          // Read as bytes: tensor memory may hold values other than 0 and 1.
          const auto* p = static_cast<const uint8_t*>(t.data());
          truth = std::all_of(p, p + t.numel(), [](uint8_t b) { return b != 0; });
        } else {
          return invalid_argument(fmt::format(
              "method '{}', instruction {}:{}: jump condition is not a bool or bool tensor",
              meta_->name, c, pc));
        }
        if (!truth) next = static_cast<size_t>(step.b);
        break;
      }
      case Step::Kind::kFree: {
        Value& v = values_[static_cast<size_t>(step.a)];
        if (v.is_tensor()) {
          v.to_tensor().set_data(nullptr, 0);
          rebound_.push_back(&v.to_tensor());
        }
        break;
      }
    }
    pc = next;
  }
  return Status();
}

Result<const Value*> Method::output(size_t index) const {
  if (index >= output_indices_.size()) {
    return invalid_argument(fmt::format("output {} does not exist: method '{}' has {} output(s)",
                                        index, meta_->name, output_indices_.size()));
  }
  if (!has_outputs_) {
    return failed_precondition(fmt::format(
        "method '{}' has no outputs to give: execute() has not succeeded since its inputs were "
        "last set",
        meta_->name));
  }
  return &values_[static_cast<size_t>(output_indices_[index])];
}

Result<const Tensor*> Method::attribute(std::string_view name) const {
  std::vector<std::string_view> names;  // the first 20, for the error
  for (const AttributeMeta& a : meta_->attributes) {
    if (a.name == name) {
      const Value& v = values_[static_cast<size_t>(a.value_index)];
      if (!v.is_tensor()) {
        return internal_error(fmt::format("attribute '{}' of method '{}' holds no tensor",
                                          printable(name), meta_->name));
      }
      return &v.to_tensor();
    }
    if (names.size() < 20) names.push_back(a.name);
  }
  const size_t more = meta_->attributes.size() - names.size();
  return not_found(fmt::format(
      "method '{}' has no attribute '{}'; {}", meta_->name,
      printable(name.substr(0, std::min<size_t>(name.size(), 200))),
      names.empty() ? std::string("it has none (a program names its mutable buffers when "
                                  "exported with ExecutorchBackendConfig(emit_mutable_buffer_"
                                  "names=True))")
                    : fmt::format("it has: {}{}", fmt::join(names, ", "),
                                  more ? fmt::format(" and {} more", more) : "")));
}

}  // namespace et
