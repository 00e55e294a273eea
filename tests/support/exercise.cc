#include "tests/support/exercise.h"

#include <vector>

#include "runtime/method.h"
#include "runtime/program.h"

namespace et::testing {
namespace {

// Refuses inputs so large that exercising them would only test the allocator.
constexpr size_t kMaxExerciseBytes = 64 << 20;

struct Outcome {
  bool loaded = false;
  bool executed = false;  // execute() was called (and returned, whatever its status)
};

Outcome run_method(const std::shared_ptr<const Program>& program, const std::string& name) {
  Outcome outcome;
  auto method = Method::load(program, name, {.max_planned_bytes = kMaxExerciseBytes});
  if (!method.ok()) return outcome;
  outcome.loaded = true;
  Method& m = **method;
  std::vector<std::vector<uint8_t>> storage;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<InputValue> inputs;
  storage.reserve(m.num_inputs() + m.num_outputs());
  shapes.reserve(m.num_inputs());
  for (const ValueMeta& in : m.meta().inputs) {
    if (in.kind == ValueKind::kTensor) {
      if (in.tensor->nbytes > kMaxExerciseBytes) return outcome;
      auto& bytes = storage.emplace_back(in.tensor->nbytes);
      auto& shape = shapes.emplace_back(in.tensor->sizes.begin(), in.tensor->sizes.end());
      TensorView view;
      view.data = bytes.data();
      view.nbytes = bytes.size();
      view.dtype = in.tensor->dtype;
      view.sizes = shape;
      inputs.push_back(InputValue::of_tensor(view));
    } else if (in.kind == ValueKind::kInt) {
      inputs.push_back(InputValue::of_int(in.traced.to_int()));
    } else if (in.kind == ValueKind::kDouble) {
      inputs.push_back(InputValue::of_double(in.traced.to_double()));
    } else if (in.kind == ValueKind::kBool) {
      inputs.push_back(InputValue::of_bool(in.traced.to_bool()));
    } else {
      InputValue v;
      v.kind = in.kind;
      inputs.push_back(v);
    }
  }
  if (!m.set_inputs(inputs).ok()) return outcome;
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const ValueMeta& out = m.meta().outputs[i];
    if (out.tensor && !out.tensor->is_memory_planned && !m.output_is_input(i)) {
      if (out.tensor->nbytes > kMaxExerciseBytes) return outcome;
      auto& bytes = storage.emplace_back(out.tensor->nbytes + 1);
      (void)m.set_output_buffer(i, bytes.data(), bytes.size()).ok();
    }
  }
  (void)m.execute().ok();
  outcome.executed = true;
  for (size_t i = 0; i < m.num_outputs(); ++i) (void)m.output(i).ok();
  return outcome;
}

}  // namespace

ExerciseResult exercise_program(std::span<const uint8_t> bytes) {
  ExerciseResult result;
  auto program = Program::load(ProgramBytes::copy_of(bytes));
  if (!program.ok()) return result;
  result.program_loaded = true;
  for (const std::string& name : (*program)->method_names()) {
    const Outcome outcome = run_method(*program, name);
    result.methods_loaded += outcome.loaded;
    result.methods_executed += outcome.executed;
  }
  return result;
}

}  // namespace et::testing
