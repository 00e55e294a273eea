#include "runtime/core/program_verifier.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <string>

#include "runtime/core/data_file.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"

namespace et {
namespace {

constexpr int8_t kDataLocationInline = 0;
constexpr int8_t kDataLocationSegment = 1;
constexpr int8_t kTensorDataSegment = 0;
constexpr int8_t kTensorDataExternal = 1;
constexpr int8_t kMaxShapeDynamism = 1;  // 2 (unbounded) is not supported
constexpr int8_t kMaxDeviceType = 1;     // CPU, CUDA
// Each input and output costs a few hundred bytes of metadata per program and per
// method; a 4-byte index each in the file, so without a cap a small file costs
// gigabytes at load. Far above what any exported model has.
constexpr size_t kMaxInputsOrOutputs = 4096;
constexpr std::string_view kEtViewOp = "executorch_prim::et_view";

template <typename T>
size_t length(const flatbuffers::Vector<T>* v) {
  return v == nullptr ? 0 : v->size();
}

// a + b <= limit without overflow.
bool fits(uint64_t a, uint64_t b, uint64_t limit) { return a <= limit && b <= limit - a; }

// Checks that the program's pieces of segment data lie inside the file.
class ProgramChecker {
 public:
  ProgramChecker(const fb::Program& root, std::span<const uint8_t> file, const PteHeader& header,
                 const DataFile* data)
      : root_(root), file_(file), header_(header), data_(data) {}

  Status run() {
    ET_RETURN_IF_ERROR(check_segments());
    ET_RETURN_IF_ERROR(check_subsegments());
    ET_RETURN_IF_ERROR(check_named_data());
    if (root_.execution_plan() == nullptr || root_.execution_plan()->size() == 0) {
      return invalid_program("the program has no methods (execution_plan is empty)");
    }
    std::set<std::string_view> names;
    for (uint32_t i = 0; i < root_.execution_plan()->size(); ++i) {
      const fb::ExecutionPlan* plan = root_.execution_plan()->Get(i);
      if (plan->name() == nullptr) {
        return invalid_program(fmt::format("method {} has no name", i));
      }
      std::string_view name = plan->name()->string_view();
      if (!names.insert(name).second) {
        return invalid_program(fmt::format("two methods are named '{}'", name));
      }
      ET_RETURN_IF_ERROR(check_plan(*plan).with_context(fmt::format("method '{}'", name)));
    }
    return Status();
  }

 private:
  // Bytes of segment data the header locates; 0 without an extended header, where
  // the exporter still lists an empty segment for the (empty) constant data.
  uint64_t segment_data_limit() const {
    if (!header_.has_extended_header || header_.segment_base_offset == 0) return 0;
    if (header_.segment_data_size != 0) return header_.segment_data_size;
    return file_.size() - header_.segment_base_offset;
  }

  Status check_segments() {
    for (uint32_t i = 0; i < length(root_.segments()); ++i) {
      const fb::DataSegment* s = root_.segments()->Get(i);
      if (!fits(s->offset(), s->size(), segment_data_limit())) {
        return invalid_program(fmt::format(
            "segment {} (offset {}, {} bytes) lies outside the {} bytes of segment data the "
            "header locates",
            i, s->offset(), s->size(), segment_data_limit()));
      }
    }
    return Status();
  }

  // The flatbuffer verifier checks a vector's length field, not its elements'
  // alignment; 8-byte elements are read in place, so they must be 8-aligned.
  template <typename T>
  Status check_vector_alignment(const flatbuffers::Vector<T>* v, std::string_view what) const {
    if (v == nullptr || v->size() == 0) return Status();
    const auto offset = reinterpret_cast<const uint8_t*>(v->data()) - file_.data();
    if (offset % alignof(T) != 0) {
      return invalid_program(
          fmt::format("{} at file offset {} is not aligned to {} bytes", what, offset, alignof(T)));
    }
    return Status();
  }

  Status check_subsegments_of(const fb::SubsegmentOffsets* sub, std::string_view what) {
    if (sub != nullptr) ET_RETURN_IF_ERROR(check_vector_alignment(sub->offsets(), what));
    if (sub == nullptr || length(sub->offsets()) == 0) return Status();
    if (sub->segment_index() >= length(root_.segments())) {
      return invalid_program(fmt::format("{} refers to segment {}, but there are {}", what,
                                         sub->segment_index(), length(root_.segments())));
    }
    const uint64_t size = root_.segments()->Get(sub->segment_index())->size();
    for (uint32_t i = 0; i < sub->offsets()->size(); ++i) {
      if (sub->offsets()->Get(i) > size) {
        return invalid_program(fmt::format("{} offset {} is {}, past the {}-byte segment", what, i,
                                           sub->offsets()->Get(i), size));
      }
    }
    return Status();
  }

  Status check_subsegments() {
    ET_RETURN_IF_ERROR(check_subsegments_of(root_.constant_segment(), "constant data"));
    for (uint32_t i = 0; i < length(root_.mutable_data_segments()); ++i) {
      ET_RETURN_IF_ERROR(
          check_subsegments_of(root_.mutable_data_segments()->Get(i), "mutable data"));
    }
    return Status();
  }

  Status check_named_data() {
    for (uint32_t i = 0; i < length(root_.named_data()); ++i) {
      const fb::NamedData* d = root_.named_data()->Get(i);
      if (d->key() == nullptr) return invalid_program(fmt::format("named data {} has no key", i));
      if (d->segment_index() >= length(root_.segments())) {
        return invalid_program(fmt::format("named data '{}' refers to segment {}, but there are {}",
                                           d->key()->string_view(), d->segment_index(),
                                           length(root_.segments())));
      }
    }
    return Status();
  }

  Status check_plan(const fb::ExecutionPlan& plan) {
    plan_ = &plan;
    ET_RETURN_IF_ERROR(
        check_vector_alignment(plan.non_const_buffer_sizes(), "planned buffer sizes"));
    n_values_ = length(plan.values());
    for (uint32_t i = 0; i < n_values_; ++i) {
      ET_RETURN_IF_ERROR(check_value(i).with_context(fmt::format("value {}", i)));
    }
    for (const auto* list : {plan.inputs(), plan.outputs()}) {
      if (length(list) > kMaxInputsOrOutputs) {
        return invalid_program(
            fmt::format("the method lists {} {}; at most {} are supported", length(list),
                        list == plan.inputs() ? "inputs" : "outputs", kMaxInputsOrOutputs));
      }
    }
    ET_RETURN_IF_ERROR(check_indices(plan.inputs(), "inputs"));
    ET_RETURN_IF_ERROR(check_indices(plan.outputs(), "outputs"));
    inputs_.clear();
    outputs_.clear();
    for (uint32_t i = 0; i < length(plan.inputs()); ++i) {
      const int32_t index = plan.inputs()->Get(i);
      if (is_constant_tensor(index)) {
        return invalid_program(fmt::format(
            "input {} is value {}, a constant: a method input cannot be program data", i, index));
      }
      inputs_.insert(index);
    }
    for (uint32_t i = 0; i < length(plan.outputs()); ++i) outputs_.insert(plan.outputs()->Get(i));
    for (uint32_t i = 0; i < length(plan.operators()); ++i) {
      const fb::Operator* op = plan.operators()->Get(i);
      if (op->name() == nullptr) return invalid_program(fmt::format("operator {} has no name", i));
    }
    for (uint32_t i = 0; i < length(plan.delegates()); ++i) {
      ET_RETURN_IF_ERROR(
          check_delegate(*plan.delegates()->Get(i)).with_context(fmt::format("delegate {}", i)));
    }
    for (uint32_t c = 0; c < length(plan.chains()); ++c) {
      const fb::Chain* chain = plan.chains()->Get(c);
      const size_t n = length(chain->instructions());
      for (uint32_t i = 0; i < n; ++i) {
        ET_RETURN_IF_ERROR(check_instruction(*chain->instructions()->Get(i), n)
                               .with_context(fmt::format("instruction {}:{}", c, i)));
      }
    }
    return Status();
  }

  Status check_index(int64_t index, std::string_view what) const {
    if (index < 0 || static_cast<uint64_t>(index) >= n_values_) {
      return invalid_program(
          fmt::format("{} refers to value {}, but the method has {}", what, index, n_values_));
    }
    return Status();
  }

  Status check_indices(const flatbuffers::Vector<int32_t>* indices, std::string_view what) const {
    for (uint32_t i = 0; i < length(indices); ++i) {
      ET_RETURN_IF_ERROR(check_index(indices->Get(i), what));
    }
    return Status();
  }

  // A tensor whose data is program bytes (shared by every method instance).
  bool is_constant_tensor(int32_t index) const {
    if (value_type(index) != fb::KernelTypes::Tensor) return false;
    const fb::Tensor* t = plan_->values()->Get(static_cast<uint32_t>(index))->val_as_Tensor();
    return t->allocation_info() == nullptr && t->data_buffer_idx() > 0;
  }

  // Instructions that replace what a value is or where its memory lives may not touch
  // what the caller binds (inputs), reads (outputs, for frees) or shares (constants).
  Status check_rebinding(int32_t index, std::string_view what, bool outputs_too) const {
    const char* role = inputs_.count(index)                   ? "a method input"
                       : outputs_too && outputs_.count(index) ? "a method output"
                       : is_constant_tensor(index)            ? "a constant"
                                                              : nullptr;
    if (role == nullptr) return Status();
    return invalid_program(
        fmt::format("{} value {} is {}, which no instruction may replace", what, index, role));
  }

  fb::KernelTypes value_type(int32_t index) const {
    return plan_->values()->Get(static_cast<uint32_t>(index))->val_type();
  }

  Status check_list_items(const flatbuffers::Vector<int32_t>* items, fb::KernelTypes want,
                          bool allow_none, std::string_view what) const {
    for (uint32_t i = 0; i < length(items); ++i) {
      const int32_t index = items->Get(i);
      if (allow_none && index == -1) continue;
      ET_RETURN_IF_ERROR(check_index(index, what));
      const fb::KernelTypes t = value_type(index);
      if (t != want && !(allow_none && t == fb::KernelTypes::Null)) {
        return invalid_program(fmt::format("{} item {} is value {}, which is not a {}", what, i,
                                           index, fb::EnumNameKernelTypes(want)));
      }
    }
    return Status();
  }

  Status check_value(uint32_t index) {
    const fb::EValue* v = plan_->values()->Get(index);
    // The flatbuffer verifier accepts a union whose type is set but whose table is
    // absent; every accessor below needs the table.
    if (v->val_type() != fb::KernelTypes::Null && v->val() == nullptr) {
      return invalid_program(
          fmt::format("a {} value has no payload", fb::EnumNameKernelTypes(v->val_type())));
    }
    switch (v->val_type()) {
      case fb::KernelTypes::Null:
        return Status();
      case fb::KernelTypes::Int:
      case fb::KernelTypes::Bool:
      case fb::KernelTypes::Double:
        return Status();
      case fb::KernelTypes::DoubleList:
        return check_vector_alignment(v->val_as_DoubleList()->items(), "float list");
      case fb::KernelTypes::String:
        return v->val_as_String() && v->val_as_String()->string_val()
                   ? Status()
                   : invalid_program("string value has no string");
      case fb::KernelTypes::Tensor:
        return check_tensor(*v->val_as_Tensor());
      case fb::KernelTypes::IntList: {
        const fb::IntList* l = v->val_as_IntList();
        ET_RETURN_IF_ERROR(check_vector_alignment(l->items(), "int list"));
        for (uint32_t i = 0; i < length(l->items()); ++i) {
          const int64_t item = l->items()->Get(i);
          ET_RETURN_IF_ERROR(check_index(item, "int list"));
          if (value_type(static_cast<int32_t>(item)) != fb::KernelTypes::Int) {
            return invalid_program(
                fmt::format("int list item {} is value {}, not an int", i, item));
          }
        }
        return Status();
      }
      case fb::KernelTypes::BoolList: {
        const fb::BoolList* l = v->val_as_BoolList();
        for (uint32_t i = 0; i < length(l->items()); ++i) {
          const uint8_t raw = reinterpret_cast<const uint8_t*>(l->items()->data())[i];
          if (raw > 1) return invalid_program(fmt::format("bool list item {} is {}", i, raw));
        }
        return Status();
      }
      case fb::KernelTypes::TensorList:
        return check_list_items(v->val_as_TensorList()->items(), fb::KernelTypes::Tensor, false,
                                "tensor list");
      case fb::KernelTypes::OptionalTensorList:
        return check_list_items(v->val_as_OptionalTensorList()->items(), fb::KernelTypes::Tensor,
                                true, "optional tensor list");
      default:
        return invalid_program(
            fmt::format("unknown value type {}", static_cast<int>(v->val_type())));
    }
  }

  Status check_tensor(const fb::Tensor& t) {
    ET_ASSIGN_OR_RETURN(ScalarType dtype, scalar_type_from_code(t.scalar_type()));
    if (t.storage_offset() != 0) {
      return invalid_program(
          fmt::format("storage offset is {}; only 0 is valid", t.storage_offset()));
    }
    const size_t rank = length(t.sizes());
    if (rank > kMaxRank) {
      return invalid_program(fmt::format("rank {} is above the maximum of {}", rank, kMaxRank));
    }
    std::array<int32_t, kMaxRank> sizes{};
    for (uint32_t d = 0; d < rank; ++d) sizes[d] = t.sizes()->Get(d);
    std::span<const uint8_t> dim_order;
    if (t.dim_order() != nullptr) dim_order = {t.dim_order()->data(), t.dim_order()->size()};
    if (Status s = Tensor::validate_shape({sizes.data(), rank}, dim_order); !s.ok()) {
      return invalid_program(s.message());
    }
    // The byte count, and the span of the strides (an empty dim counts as 1 there, so
    // a 0 elsewhere does not excuse the other dims), must fit in int64.
    uint64_t nbytes = element_size(dtype);
    uint64_t span = element_size(dtype);
    for (uint32_t d = 0; d < rank; ++d) {
      const auto size = static_cast<uint64_t>(sizes[d]);
      if (__builtin_mul_overflow(nbytes, size, &nbytes) ||
          __builtin_mul_overflow(span, std::max<uint64_t>(size, 1), &span) ||
          span > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return invalid_program(fmt::format("shape {} overflows the byte count",
                                           shape_string(std::span(sizes.data(), rank))));
      }
    }
    if (t.layout() != 0) {
      return not_supported(
          fmt::format("tensor layout {} (only strided, 0, is supported)", t.layout()));
    }
    if (t.shape_dynamism() < 0 || t.shape_dynamism() > kMaxShapeDynamism) {
      return not_supported(fmt::format(
          "shape dynamism {}: only static (0) and bounded dynamic (1) shapes are supported",
          t.shape_dynamism()));
    }
    if (const fb::ExtraTensorInfo* extra = t.extra_tensor_info()) {
      if (extra->device_type() < 0 || extra->device_type() > kMaxDeviceType) {
        return invalid_program(fmt::format("unknown device type {}", extra->device_type()));
      }
      if (extra->location() == kTensorDataExternal) {
        ET_RETURN_IF_ERROR(check_tensor_data(t, nbytes, /*external=*/true));
        return check_external_data(t, *extra, nbytes);
      }
      if (extra->location() != kTensorDataSegment) {
        return invalid_program(fmt::format("unknown tensor data location {}", extra->location()));
      }
    }
    return check_tensor_data(t, nbytes);
  }

  // A tensor whose bytes are in the .ptd under its fully qualified name: a constant,
  // or with allocation info the initial value of a planned (mutable) tensor.
  Status check_external_data(const fb::Tensor& t, const fb::ExtraTensorInfo& extra,
                             uint64_t nbytes) const {
    if (extra.fully_qualified_name() == nullptr || extra.fully_qualified_name()->size() == 0) {
      return invalid_program("a tensor kept in external data has no name to find it by");
    }
    const std::string_view name = extra.fully_qualified_name()->string_view();
    // Without a data file the program still loads (its metadata can be read); a method
    // that holds such a tensor refuses to load (Method::load), as ExecuTorch's does.
    if (data_ == nullptr) return Status();
    Result<std::span<const uint8_t>> bytes = data_->find(name);
    if (!bytes.ok()) {
      return invalid_argument(fmt::format(
          "the external data file has no tensor '{}' that the program needs: it was exported "
          "with another version of the model; pass the .ptd written together with this .pte",
          name));
    }
    const auto dtype = static_cast<ScalarType>(t.scalar_type());
    if (const DataLayout* layout = data_->layout(name)) {
      const bool same_sizes =
          t.sizes() != nullptr && std::equal(layout->sizes.begin(), layout->sizes.end(),
                                             t.sizes()->begin(), t.sizes()->end());
      if (layout->dtype != dtype || !same_sizes) {
        std::vector<int32_t> want;
        if (t.sizes()) want.assign(t.sizes()->begin(), t.sizes()->end());
        return invalid_argument(fmt::format(
            "the external data file's '{}' is {} [{}]; the program expects {} [{}]: pass the "
            ".ptd written together with this .pte",
            name, scalar_type_name(layout->dtype), fmt::join(layout->sizes, ", "),
            scalar_type_name(dtype), fmt::join(want, ", ")));
      }
    }
    if (bytes->size() < nbytes) {
      return invalid_argument(
          fmt::format("the external data file's '{}' has {} bytes; the program's tensor needs {}",
                      name, bytes->size(), nbytes));
    }
    // Constants are read in place (data files are loaded at an address aligned to 16).
    const auto offset = static_cast<uint64_t>(bytes->data() - data_->bytes().data());
    if (offset % element_size_ != 0) {
      return invalid_argument(
          fmt::format("the external data file's '{}' at byte {} is not aligned to its {}-byte "
                      "elements",
                      name, offset, element_size_));
    }
    return Status();
  }

  // `external`: the bytes are in the .ptd (check_external_data), not at the data index.
  Status check_tensor_data(const fb::Tensor& t, uint64_t nbytes, bool external = false) {
    element_size_ = element_size(static_cast<ScalarType>(t.scalar_type()));
    const uint32_t data_index = t.data_buffer_idx();
    if (const fb::AllocationDetails* a = t.allocation_info()) {
      const size_t n_buffers = length(plan_->non_const_buffer_sizes());
      if (a->memory_id() == 0 || a->memory_id() >= n_buffers) {
        return invalid_program(fmt::format("planned in buffer {}, but the method has buffers 1..{}",
                                           a->memory_id(), n_buffers == 0 ? 0 : n_buffers - 1));
      }
      const int64_t buffer_size = plan_->non_const_buffer_sizes()->Get(a->memory_id());
      const uint64_t offset = (uint64_t{a->memory_offset_high()} << 32) | a->memory_offset_low();
      if (offset % element_size_ != 0) {
        return invalid_program(
            fmt::format("planned at offset {}, which is not aligned to its {}-byte elements",
                        offset, element_size_));
      }
      if (buffer_size < 0 || !fits(offset, nbytes, static_cast<uint64_t>(buffer_size))) {
        return invalid_program(
            fmt::format("{} bytes at offset {} do not fit planned buffer {} "
                        "of {} bytes",
                        nbytes, offset, a->memory_id(), buffer_size));
      }
      if (data_index > 0 && !external)
        return check_subsegment_data(mutable_segment(), data_index, nbytes, "mutable");
      return Status();
    }
    if (data_index == 0 || external) return Status();
    const fb::SubsegmentOffsets* constants = root_.constant_segment();
    if (constants != nullptr && length(constants->offsets()) > 0) {
      return check_subsegment_data(constants, data_index, nbytes, "constant");
    }
    if (data_index >= length(root_.constant_buffer())) {
      return invalid_program(fmt::format("constant buffer {} does not exist (the program has {})",
                                         data_index, length(root_.constant_buffer())));
    }
    const auto* storage = root_.constant_buffer()->Get(data_index)->storage();
    if (length(storage) < nbytes) {
      return invalid_program(fmt::format("constant buffer {} has {} bytes; the tensor needs {}",
                                         data_index, length(storage), nbytes));
    }
    if (storage != nullptr) {
      return check_aligned(static_cast<uint64_t>(storage->data() - file_.data()), "constant");
    }
    return Status();
  }

  const fb::SubsegmentOffsets* mutable_segment() const {
    if (length(root_.mutable_data_segments()) == 0) return nullptr;
    return root_.mutable_data_segments()->Get(0);
  }

  Status check_subsegment_data(const fb::SubsegmentOffsets* sub, uint32_t index, uint64_t nbytes,
                               std::string_view what) const {
    if (sub == nullptr || index >= length(sub->offsets())) {
      return invalid_program(fmt::format("{} data index {} does not exist (there are {})", what,
                                         index, sub == nullptr ? 0 : length(sub->offsets())));
    }
    const fb::DataSegment* segment = root_.segments()->Get(sub->segment_index());
    const uint64_t offset = sub->offsets()->Get(index);
    if (!fits(offset, nbytes, segment->size())) {
      return invalid_program(
          fmt::format("{} data {} needs {} bytes at offset {} of a {}-byte segment", what, index,
                      nbytes, offset, segment->size()));
    }
    return check_aligned(header_.segment_base_offset + segment->offset() + offset, what);
  }

  // Kernels read tensor data in place, so it must sit at a multiple of its element size
  // (program bytes are loaded at an address aligned to at least 16).
  Status check_aligned(uint64_t file_offset, std::string_view what) const {
    if (file_offset % element_size_ != 0) {
      return invalid_program(
          fmt::format("{} data at file offset {} is not aligned to its {}-byte elements", what,
                      file_offset, element_size_));
    }
    return Status();
  }

  Status check_delegate(const fb::BackendDelegate& d) const {
    if (d.id() == nullptr) return invalid_program("backend id is missing");
    const fb::BackendDelegateDataReference* ref = d.processed();
    if (ref == nullptr) return invalid_program("payload reference is missing");
    if (ref->location() == kDataLocationInline) {
      if (ref->index() >= length(root_.backend_delegate_data())) {
        return invalid_program(fmt::format("inline payload {} does not exist (there are {})",
                                           ref->index(), length(root_.backend_delegate_data())));
      }
      if (root_.backend_delegate_data()->Get(ref->index())->data() == nullptr) {
        return invalid_program(fmt::format("inline payload {} has no data", ref->index()));
      }
      return Status();
    }
    if (ref->location() == kDataLocationSegment) {
      if (ref->index() >= length(root_.segments())) {
        return invalid_program(fmt::format("payload segment {} does not exist (there are {})",
                                           ref->index(), length(root_.segments())));
      }
      return Status();
    }
    return invalid_program(fmt::format("unknown payload location {}", ref->location()));
  }

  Status check_instruction(const fb::Instruction& instr, size_t chain_length) const {
    if (instr.instr_args() == nullptr) return invalid_program("instruction has no arguments");
    switch (instr.instr_args_type()) {
      case fb::InstructionArguments::KernelCall: {
        const fb::KernelCall* k = instr.instr_args_as_KernelCall();
        if (k->op_index() < 0 || static_cast<size_t>(k->op_index()) >= length(plan_->operators())) {
          return invalid_program(fmt::format("operator {} does not exist (the method has {})",
                                             k->op_index(), length(plan_->operators())));
        }
        ET_RETURN_IF_ERROR(check_indices(k->args(), "kernel argument"));
        const fb::Operator* op = plan_->operators()->Get(static_cast<uint32_t>(k->op_index()));
        if (op->name()->string_view() == kEtViewOp && length(k->args()) > 0) {
          // A view points its output at another tensor's memory until the next execute.
          return check_rebinding(k->args()->Get(length(k->args()) - 1), "et_view's output", false);
        }
        return Status();
      }
      case fb::InstructionArguments::DelegateCall: {
        const fb::DelegateCall* d = instr.instr_args_as_DelegateCall();
        if (d->delegate_index() < 0 ||
            static_cast<size_t>(d->delegate_index()) >= length(plan_->delegates())) {
          return invalid_program(fmt::format("delegate {} does not exist (the method has {})",
                                             d->delegate_index(), length(plan_->delegates())));
        }
        return check_indices(d->args(), "delegate argument");
      }
      case fb::InstructionArguments::MoveCall: {
        const fb::MoveCall* m = instr.instr_args_as_MoveCall();
        ET_RETURN_IF_ERROR(check_index(m->move_from(), "move source"));
        ET_RETURN_IF_ERROR(check_index(m->move_to(), "move destination"));
        return check_rebinding(m->move_to(), "the move destination", false);
      }
      case fb::InstructionArguments::JumpFalseCall: {
        const fb::JumpFalseCall* j = instr.instr_args_as_JumpFalseCall();
        ET_RETURN_IF_ERROR(check_index(j->cond_value_index(), "jump condition"));
        if (j->destination_instruction() < 0 ||
            static_cast<size_t>(j->destination_instruction()) >= chain_length) {
          return invalid_program(fmt::format("jump to instruction {} of a {}-instruction chain",
                                             j->destination_instruction(), chain_length));
        }
        const fb::KernelTypes t = value_type(j->cond_value_index());
        if (t != fb::KernelTypes::Bool && t != fb::KernelTypes::Tensor) {
          return invalid_program("jump condition is neither a bool nor a tensor");
        }
        return Status();
      }
      case fb::InstructionArguments::FreeCall: {
        const int32_t index = instr.instr_args_as_FreeCall()->value_index();
        ET_RETURN_IF_ERROR(check_index(index, "free"));
        return check_rebinding(index, "the freed", true);
      }
      default:
        return invalid_program(
            fmt::format("unknown instruction type {}", static_cast<int>(instr.instr_args_type())));
    }
  }

  const fb::Program& root_;
  std::span<const uint8_t> file_;
  const PteHeader& header_;
  const DataFile* data_;  // nullptr: the program was loaded without a .ptd
  const fb::ExecutionPlan* plan_ = nullptr;
  size_t n_values_ = 0;
  std::set<int32_t> inputs_, outputs_;  // of the method being checked
  size_t element_size_ = 1;             // of the tensor being checked
};

}  // namespace

Status verify_program(const fb::Program& root, std::span<const uint8_t> file,
                      const PteHeader& header, const DataFile* data) {
  return ProgramChecker(root, file, header, data).run();
}

size_t declared_nbytes(const fb::Tensor& tensor) {
  size_t n = element_size(static_cast<ScalarType>(tensor.scalar_type()));
  for (uint32_t d = 0; d < length(tensor.sizes()); ++d)
    n *= static_cast<size_t>(tensor.sizes()->Get(d));
  return n;
}

}  // namespace et
