// What a method declares about its inputs and outputs, read from the program
// without loading the method (no memory is allocated).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"
#include "runtime/core/value.h"

namespace et {

struct TensorMeta {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int32_t> sizes;      // upper bounds when dynamic
  std::vector<uint8_t> dim_order;  // (0, 1, ..., n-1) is contiguous
  size_t nbytes = 0;               // at the upper-bound sizes
  bool is_memory_planned = false;  // false: the caller provides the memory
  bool is_dynamic = false;         // sizes may be smaller than `sizes` at run time
  DeviceType device = DeviceType::kCpu;
  int8_t device_index = 0;
};

// One input or output. `tensor` is set for tensors; `traced` holds the value an int,
// float or bool input was exported with (the only value the method accepts).
struct ValueMeta {
  ValueKind kind = ValueKind::kNone;
  std::optional<TensorMeta> tensor;
  Value traced;
};

// A tensor the program names (its fully qualified name, e.g. a mutable buffer "state"
// or a weight kept in a .ptd): ExecuTorch calls these a method's attributes.
struct AttributeMeta {
  std::string name;
  TensorMeta tensor;
  int32_t value_index = -1;  // in the method's value table
};

struct MethodMeta {
  std::string name;
  std::vector<ValueMeta> inputs;
  std::vector<ValueMeta> outputs;
  std::vector<int64_t> planned_buffer_sizes;  // bytes of each planned buffer, in order
  std::vector<std::string> operators;         // "name.overload" of every operator it calls
  std::vector<std::string> backends;          // delegate ids it calls
  std::vector<AttributeMeta> attributes;      // in value-table order
  std::string input_spec;                     // pytree spec strings, as exported
  std::string output_spec;
};

}  // namespace et
