// Builds small synthetic .pte programs for tests, so each check of the verifier and
// each instruction of the executor can be exercised on exactly the bytes it is about.
// Test-only: not part of the runtime library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/scalar_type.h"

namespace et::testing {

class ProgramBuilder {
 public:
  struct TensorSpec {
    ScalarType dtype = ScalarType::kFloat;
    std::vector<int32_t> sizes;
    std::vector<uint8_t> dim_order;     // empty: contiguous
    std::optional<uint32_t> memory_id;  // planned in this buffer
    uint64_t memory_offset = 0;
    uint32_t data_buffer_idx = 0;  // > 0: constant (inline constant_buffer) or initial value
    int8_t shape_dynamism = 0;
    int8_t scalar_type_override = -1;  // >= 0: write this raw code instead of dtype
    std::string external_name;         // non-empty: the bytes are in the .ptd under it
  };

  // Each add_* returns the new value's index.
  int add_tensor(TensorSpec spec);
  int add_int(int64_t v);
  int add_bool(bool v);
  int add_double(double v);
  int add_none();
  int add_int_list(std::vector<int64_t> items);
  int add_tensor_list(std::vector<int32_t> items);

  int add_operator(std::string name, std::string overload = "");
  void kernel_call(int op, std::vector<int32_t> args);
  void move(int from, int to);
  void jump_false(int cond, int destination);
  void free_value(int value);

  void set_inputs(std::vector<int32_t> inputs) { inputs_ = std::move(inputs); }
  void set_outputs(std::vector<int32_t> outputs) { outputs_ = std::move(outputs); }
  // Byte sizes of planned buffers 1..n (buffer 0 is reserved and added here).
  void set_planned_buffers(std::vector<int64_t> sizes) { buffers_ = std::move(sizes); }
  // Inline constant buffers 1..n (0 is the reserved placeholder).
  void add_constant(std::vector<uint8_t> bytes) { constants_.push_back(std::move(bytes)); }

  // The serialized program, identifier "ET12", no extended header.
  std::vector<uint8_t> finish(const std::string& method = "forward") const;

 private:
  struct ValueSpec {
    enum class Kind { kTensor, kInt, kBool, kDouble, kNone, kIntList, kTensorList };
    Kind kind = Kind::kNone;
    TensorSpec tensor;
    int64_t i = 0;
    double d = 0;
    std::vector<int64_t> list;
  };
  struct InstructionSpec {
    enum class Kind { kKernel, kMove, kJumpFalse, kFree };
    Kind kind = Kind::kKernel;
    int a = 0, b = 0;
    std::vector<int32_t> args;
  };

  ValueSpec& push(ValueSpec::Kind kind);
  void push(InstructionSpec::Kind kind, int a, int b, std::vector<int32_t> args = {});

  std::vector<ValueSpec> values_;
  std::vector<std::pair<std::string, std::string>> operators_;
  std::vector<InstructionSpec> instructions_;
  std::vector<int32_t> inputs_, outputs_;
  std::vector<int64_t> buffers_;
  std::vector<std::vector<uint8_t>> constants_;
};

// A program whose method never ends by itself (one jump back to itself): only a step
// budget, a deadline or a cancellation stops it.
ProgramBuilder endless_program();

}  // namespace et::testing
