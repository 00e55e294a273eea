#include "tests/support/exercise.h"

#include <vector>

#include "runtime/method.h"
#include "runtime/program.h"
#include "server/tensor_codec.h"

namespace et::testing {
namespace {

// Refuses inputs so large that exercising them would only test the allocator.
constexpr size_t kMaxExerciseBytes = 64 << 20;

struct Outcome {
  bool loaded = false;
  bool executed = false;  // execute() was called (and returned, whatever its status)
};

// A cheap hash of the program bytes: the shapes of the second round follow from it, so
// a fuzzer input always replays the same way.
uint64_t hash_of(std::span<const uint8_t> bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

// Round 0 binds every tensor input at its declared (upper-bound) shape; later rounds at
// shapes within the bounds chosen by `seed`, some read-only. Each input lives in a
// buffer of exactly its bytes, so a kernel that writes past them is an ASan report.
Status bind_round(Method& m, int round, uint64_t seed, std::vector<std::vector<uint8_t>>& storage,
                  std::vector<std::vector<int64_t>>& shapes) {
  std::vector<InputValue> inputs;
  for (size_t i = 0; i < m.meta().inputs.size(); ++i) {
    const ValueMeta& in = m.meta().inputs[i];
    if (in.kind == ValueKind::kTensor) {
      if (in.tensor->nbytes > kMaxExerciseBytes) return invalid_argument("input too large");
      auto& shape = shapes.emplace_back(in.tensor->sizes.begin(), in.tensor->sizes.end());
      size_t nbytes = element_size(in.tensor->dtype);
      for (size_t d = 0; d < shape.size(); ++d) {
        if (round > 0 && in.tensor->is_dynamic) {
          const uint64_t pick = (seed >> ((i * 7 + d + static_cast<size_t>(round)) % 61)) ^ i;
          shape[d] = static_cast<int64_t>(pick % static_cast<uint64_t>(shape[d] + 1));
        }
        nbytes *= static_cast<size_t>(shape[d]);
      }
      auto& bytes = storage.emplace_back(nbytes);
      TensorView view;
      view.data = bytes.data();
      view.nbytes = bytes.size();
      view.dtype = in.tensor->dtype;
      view.sizes = shape;
      view.writable = round == 0 || ((seed >> i) & 1) == 0;
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
  return m.set_inputs(inputs);
}

// Reads every output the way the daemon returns it (every byte, inline).
void read_outputs(const Method& m) {
  const server::SegmentLookup no_segments =
      [](uint64_t) -> Result<std::shared_ptr<server::Segment>> { return not_found("no segments"); };
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    auto v = m.output(i);
    if (!v.ok()) continue;
    ::etserver::v1::Value encoded;
    (void)server::encode_output(i, **v, nullptr, no_segments, encoded).ok();
  }
}

Outcome run_method(const std::shared_ptr<const Program>& program, const std::string& name,
                   uint64_t seed) {
  Outcome outcome;
  auto method = Method::load(program, name, {.max_planned_bytes = kMaxExerciseBytes});
  if (!method.ok()) return outcome;
  outcome.loaded = true;
  Method& m = **method;
  // Inputs stay bound to their buffers until the next binding: nothing is freed here
  // before the method is.
  std::vector<std::vector<uint8_t>> storage;
  std::vector<std::vector<int64_t>> shapes;
  storage.reserve(4 * (m.num_inputs() + m.num_outputs()));
  shapes.reserve(4 * m.num_inputs());
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const ValueMeta& out = m.meta().outputs[i];
    if (out.tensor && !out.tensor->is_memory_planned && !m.output_is_input(i)) {
      if (out.tensor->nbytes > kMaxExerciseBytes) return outcome;
      auto& bytes = storage.emplace_back(out.tensor->nbytes);
      (void)m.set_output_buffer(i, bytes.data(), bytes.size()).ok();
    }
  }
  // Execute twice per binding, and bind twice: what one execute leaves behind (views,
  // frees, moves) must not reach the next, nor memory the next binding replaced.
  for (int round = 0; round < 2; ++round) {
    if (!bind_round(m, round, seed, storage, shapes).ok()) continue;
    for (int run = 0; run < 2; ++run) {
      (void)m.execute().ok();
      outcome.executed = true;
      read_outputs(m);
    }
  }
  return outcome;
}

}  // namespace

ExerciseResult exercise_program(std::span<const uint8_t> bytes) {
  ExerciseResult result;
  auto program = Program::load(ProgramBytes::copy_of(bytes));
  if (!program.ok()) return result;
  result.program_loaded = true;
  for (const std::string& name : (*program)->method_names()) {
    const Outcome outcome = run_method(*program, name, hash_of(bytes));
    result.methods_loaded += outcome.loaded;
    result.methods_executed += outcome.executed;
  }
  return result;
}

}  // namespace et::testing
