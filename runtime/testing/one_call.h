// A program of one kernel call, for kernel tests that call a kernel by name through
// Method (the way programs reach kernels) on tensors of chosen shapes, dtypes and
// layouts. Test-only.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/testing/program_builder.h"

namespace et::testing {

// Builds a program of one kernel call. Planned tensors share memory buffer 1, each at
// its own 16-byte aligned offset; constants are inline constant buffers.
class OneCall {
 public:
  int planned(ScalarType dtype, std::vector<int32_t> sizes, std::vector<uint8_t> dim_order = {},
              int8_t shape_dynamism = 0) {
    ProgramBuilder::TensorSpec spec;
    spec.dtype = dtype;
    spec.sizes = sizes;
    spec.dim_order = std::move(dim_order);
    spec.memory_id = 1;
    spec.memory_offset = next_offset_;
    spec.shape_dynamism = shape_dynamism;
    size_t n = element_size(dtype);
    for (int32_t s : sizes) n *= static_cast<size_t>(s);
    next_offset_ += (n + 15) / 16 * 16;
    return b.add_tensor(spec);
  }

  template <typename T>
  int constant(ScalarType dtype, std::vector<int32_t> sizes, const std::vector<T>& data) {
    std::vector<uint8_t> bytes(data.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
    b.add_constant(std::move(bytes));
    ProgramBuilder::TensorSpec spec;
    spec.dtype = dtype;
    spec.sizes = std::move(sizes);
    spec.data_buffer_idx = ++constants_;
    return b.add_tensor(spec);
  }

  // A tensor with no memory at all (only its shape can be read).
  int shape_only(ScalarType dtype, std::vector<int32_t> sizes) {
    ProgramBuilder::TensorSpec spec;
    spec.dtype = dtype;
    spec.sizes = std::move(sizes);
    return b.add_tensor(spec);
  }

  void call(const std::string& name, const std::string& overload, std::vector<int32_t> args) {
    b.kernel_call(b.add_operator(name, overload), std::move(args));
  }

  Result<std::unique_ptr<Method>> load() {
    if (next_offset_ > 0) b.set_planned_buffers({static_cast<int64_t>(next_offset_)});
    ET_ASSIGN_OR_RETURN(std::shared_ptr<const Program> program,
                        Program::load(ProgramBytes::adopt(b.finish())));
    return Method::load(program, "forward");
  }

  ProgramBuilder b;

 private:
  uint64_t next_offset_ = 0;
  uint32_t constants_ = 0;
};

// The values of a loaded method's output `output` (a tensor of T), copied.
template <typename T>
std::vector<T> values_of(const Method& m, size_t output) {
  const Tensor& t = (*m.output(output))->to_tensor();
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.numel());
}

}  // namespace et::testing
