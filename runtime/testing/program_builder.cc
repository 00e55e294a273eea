#include "runtime/testing/program_builder.h"

#include <flatbuffers/flatbuffers.h>

#include "runtime/schema/program_generated.h"

namespace et::testing {

ProgramBuilder::ValueSpec& ProgramBuilder::push(ValueSpec::Kind kind) {
  values_.emplace_back();
  values_.back().kind = kind;
  return values_.back();
}

void ProgramBuilder::push(InstructionSpec::Kind kind, int a, int b, std::vector<int32_t> args) {
  instructions_.emplace_back();
  InstructionSpec& spec = instructions_.back();
  spec.kind = kind;
  spec.a = a;
  spec.b = b;
  spec.args = std::move(args);
}

int ProgramBuilder::add_tensor(TensorSpec spec) {
  push(ValueSpec::Kind::kTensor).tensor = std::move(spec);
  return static_cast<int>(values_.size()) - 1;
}

int ProgramBuilder::add_int(int64_t v) {
  push(ValueSpec::Kind::kInt).i = v;
  return static_cast<int>(values_.size()) - 1;
}

int ProgramBuilder::add_bool(bool v) {
  push(ValueSpec::Kind::kBool).i = v;
  return static_cast<int>(values_.size()) - 1;
}

int ProgramBuilder::add_double(double v) {
  push(ValueSpec::Kind::kDouble).d = v;
  return static_cast<int>(values_.size()) - 1;
}

int ProgramBuilder::add_none() {
  push(ValueSpec::Kind::kNone);
  return static_cast<int>(values_.size()) - 1;
}

int ProgramBuilder::add_int_list(std::vector<int64_t> items) {
  push(ValueSpec::Kind::kIntList).list = std::move(items);
  return static_cast<int>(values_.size()) - 1;
}

int ProgramBuilder::add_tensor_list(std::vector<int32_t> items) {
  push(ValueSpec::Kind::kTensorList).list.assign(items.begin(), items.end());
  return static_cast<int>(values_.size()) - 1;
}

int ProgramBuilder::add_operator(std::string name, std::string overload) {
  operators_.emplace_back(std::move(name), std::move(overload));
  return static_cast<int>(operators_.size()) - 1;
}

void ProgramBuilder::kernel_call(int op, std::vector<int32_t> args) {
  push(InstructionSpec::Kind::kKernel, op, 0, std::move(args));
}
void ProgramBuilder::move(int from, int to) { push(InstructionSpec::Kind::kMove, from, to); }
void ProgramBuilder::jump_false(int cond, int destination) {
  push(InstructionSpec::Kind::kJumpFalse, cond, destination);
}
void ProgramBuilder::free_value(int value) { push(InstructionSpec::Kind::kFree, value, 0); }

std::vector<uint8_t> ProgramBuilder::finish(const std::string& method) const {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::EValue>> values;
  for (const ValueSpec& v : values_) {
    switch (v.kind) {
      case ValueSpec::Kind::kTensor: {
        const TensorSpec& t = v.tensor;
        std::vector<uint8_t> order = t.dim_order;
        if (order.empty()) {
          for (size_t d = 0; d < t.sizes.size(); ++d) order.push_back(static_cast<uint8_t>(d));
        }
        flatbuffers::Offset<fb::AllocationDetails> alloc = 0;
        if (t.memory_id) {
          alloc = fb::CreateAllocationDetails(b, *t.memory_id,
                                              static_cast<uint32_t>(t.memory_offset & 0xffffffff),
                                              static_cast<uint32_t>(t.memory_offset >> 32));
        }
        const int8_t code =
            t.scalar_type_override >= 0 ? t.scalar_type_override : static_cast<int8_t>(t.dtype);
        flatbuffers::Offset<fb::ExtraTensorInfo> extra = 0;
        if (!t.external_name.empty()) {
          extra = fb::CreateExtraTensorInfoDirect(b, 0, t.external_name.c_str(),
                                                  /*location=*/1);
        }
        auto tensor = fb::CreateTensorDirect(b, code, 0, &t.sizes, &order, false, t.data_buffer_idx,
                                             alloc, 0, t.shape_dynamism, extra);
        values.push_back(fb::CreateEValue(b, fb::KernelTypes::Tensor, tensor.Union()));
        break;
      }
      case ValueSpec::Kind::kInt:
        values.push_back(fb::CreateEValue(b, fb::KernelTypes::Int, fb::CreateInt(b, v.i).Union()));
        break;
      case ValueSpec::Kind::kBool:
        values.push_back(
            fb::CreateEValue(b, fb::KernelTypes::Bool, fb::CreateBool(b, v.i != 0).Union()));
        break;
      case ValueSpec::Kind::kDouble:
        values.push_back(
            fb::CreateEValue(b, fb::KernelTypes::Double, fb::CreateDouble(b, v.d).Union()));
        break;
      case ValueSpec::Kind::kNone:
        values.push_back(fb::CreateEValue(b, fb::KernelTypes::Null, fb::CreateNull(b).Union()));
        break;
      case ValueSpec::Kind::kIntList:
        values.push_back(fb::CreateEValue(b, fb::KernelTypes::IntList,
                                          fb::CreateIntListDirect(b, &v.list).Union()));
        break;
      case ValueSpec::Kind::kTensorList: {
        std::vector<int32_t> items(v.list.begin(), v.list.end());
        values.push_back(fb::CreateEValue(b, fb::KernelTypes::TensorList,
                                          fb::CreateTensorListDirect(b, &items).Union()));
        break;
      }
    }
  }
  std::vector<flatbuffers::Offset<fb::Instruction>> instructions;
  for (const InstructionSpec& i : instructions_) {
    switch (i.kind) {
      case InstructionSpec::Kind::kKernel:
        instructions.push_back(
            fb::CreateInstruction(b, fb::InstructionArguments::KernelCall,
                                  fb::CreateKernelCallDirect(b, i.a, &i.args).Union()));
        break;
      case InstructionSpec::Kind::kMove:
        instructions.push_back(fb::CreateInstruction(b, fb::InstructionArguments::MoveCall,
                                                     fb::CreateMoveCall(b, i.a, i.b).Union()));
        break;
      case InstructionSpec::Kind::kJumpFalse:
        instructions.push_back(fb::CreateInstruction(b, fb::InstructionArguments::JumpFalseCall,
                                                     fb::CreateJumpFalseCall(b, i.a, i.b).Union()));
        break;
      case InstructionSpec::Kind::kFree:
        instructions.push_back(fb::CreateInstruction(b, fb::InstructionArguments::FreeCall,
                                                     fb::CreateFreeCall(b, i.a).Union()));
        break;
    }
  }
  std::vector<flatbuffers::Offset<fb::Operator>> ops;
  for (const auto& [name, overload] : operators_) {
    ops.push_back(fb::CreateOperatorDirect(b, name.c_str(), overload.c_str()));
  }
  std::vector<flatbuffers::Offset<fb::Chain>> chains = {
      fb::CreateChainDirect(b, nullptr, nullptr, &instructions)};
  std::vector<int64_t> buffers = {0};
  buffers.insert(buffers.end(), buffers_.begin(), buffers_.end());
  auto plan = fb::CreateExecutionPlanDirect(b, method.c_str(), 0, &values, &inputs_, &outputs_,
                                            &chains, &ops, nullptr, &buffers);
  std::vector<flatbuffers::Offset<fb::Buffer>> constants = {fb::CreateBufferDirect(b, nullptr)};
  for (const auto& c : constants_) {
    constants.push_back(fb::CreateBufferDirect(b, &c));
  }
  std::vector<flatbuffers::Offset<fb::ExecutionPlan>> plans = {plan};
  auto program = fb::CreateProgramDirect(b, 0, &plans, &constants);
  b.Finish(program, "ET12");
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

ProgramBuilder endless_program() {
  ProgramBuilder b;
  const int never = b.add_bool(false);
  b.jump_false(never, 0);
  return b;
}

}  // namespace et::testing
