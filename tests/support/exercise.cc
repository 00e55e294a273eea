#include "tests/support/exercise.h"

#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/core/program.h"
#include "runtime/devtools/bundled_verify.h"
#include "server/transport/etproto/value_codec.h"

namespace et::testing {
namespace {

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

// Bytes whose last one ends a mapping followed by an inaccessible page, as an input at
// the end of a client's shared-memory segment: touching past them faults.
class PageEndBuffer {
 public:
  explicit PageEndBuffer(size_t nbytes) {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    span_ = (nbytes + page - 1) / page * page + page;
    void* base = mmap(nullptr, span_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return;
    base_ = static_cast<uint8_t*>(base);
    mprotect(base_ + span_ - page, page, PROT_NONE);
    data_ = base_ + span_ - page - nbytes;
  }
  ~PageEndBuffer() {
    if (base_ != nullptr) munmap(base_, span_);
  }
  PageEndBuffer(const PageEndBuffer&) = delete;
  PageEndBuffer& operator=(const PageEndBuffer&) = delete;
  uint8_t* data() const { return data_; }  // nullptr when it could not be mapped

 private:
  uint8_t* base_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t span_ = 0;
};

struct InputStorage {
  std::vector<std::vector<uint8_t>> heap;
  std::vector<std::unique_ptr<PageEndBuffer>> mapped;
  std::vector<std::vector<int64_t>> shapes;
};

// Round 0 binds every tensor input at its declared (upper-bound) shape, each in a heap
// buffer of exactly its bytes (writing past them is an ASan report); later rounds at
// shapes within the bounds chosen by `seed`, some read-only, each ending a mapping as
// if at the end of a segment (writing past faults).
Status bind_round(Method& m, int round, uint64_t seed, size_t max_bytes, InputStorage& storage) {
  std::vector<InputValue> inputs;
  for (size_t i = 0; i < m.meta().inputs.size(); ++i) {
    const ValueMeta& in = m.meta().inputs[i];
    if (in.kind == ValueKind::kTensor) {
      if (in.tensor->nbytes > max_bytes) return invalid_argument("input too large");
      auto& shape = storage.shapes.emplace_back(in.tensor->sizes.begin(), in.tensor->sizes.end());
      size_t nbytes = element_size(in.tensor->dtype);
      for (size_t d = 0; d < shape.size(); ++d) {
        if (round > 0 && in.tensor->is_dynamic) {
          const uint64_t pick = (seed >> ((i * 7 + d + static_cast<size_t>(round)) % 61)) ^ i;
          shape[d] = static_cast<int64_t>(pick % static_cast<uint64_t>(shape[d] + 1));
        }
        nbytes *= static_cast<size_t>(shape[d]);
      }
      uint8_t* data = nullptr;
      if (round > 0) data = storage.mapped.emplace_back(new PageEndBuffer(nbytes))->data();
      if (data == nullptr) data = storage.heap.emplace_back(nbytes).data();
      TensorView view;
      view.data = data;
      view.nbytes = nbytes;
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
                   uint64_t seed, const ExerciseOptions& options) {
  Outcome outcome;
  auto method = Method::load(program, name, {.max_planned_bytes = options.max_bytes});
  if (!method.ok()) return outcome;
  outcome.loaded = true;
  Method& m = **method;
  // Inputs stay bound to their buffers until the next binding: nothing is freed here
  // before the method is.
  InputStorage storage;
  std::vector<std::vector<uint8_t>> outputs;
  outputs.reserve(m.num_outputs());
  storage.heap.reserve(4 * m.num_inputs());
  storage.shapes.reserve(4 * m.num_inputs());
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const ValueMeta& out = m.meta().outputs[i];
    if (out.tensor && !out.tensor->is_memory_planned && !m.output_is_input(i)) {
      if (out.tensor->nbytes > options.max_bytes) return outcome;
      auto& bytes = outputs.emplace_back(out.tensor->nbytes);
      (void)m.set_output_buffer(i, bytes.data(), bytes.size()).ok();
    }
  }
  // Execute twice per binding, and bind twice: what one execute leaves behind (views,
  // frees, moves) must not reach the next, nor memory the next binding replaced.
  for (int round = 0; round < 2; ++round) {
    if (!bind_round(m, round, seed, options.max_bytes, storage).ok()) continue;
    if (!options.execute) continue;
    for (int run = 0; run < 2; ++run) {
      (void)m.execute().ok();
      outcome.executed = true;
      read_outputs(m);
    }
  }
  return outcome;
}

}  // namespace

ExerciseResult exercise_program(std::span<const uint8_t> bytes, std::span<const uint8_t> data,
                                const ExerciseOptions& options) {
  ExerciseResult result;
  std::shared_ptr<const DataFile> data_file;
  if (!data.empty()) {
    auto loaded = DataFile::load(ProgramBytes::copy_of(data));
    if (!loaded.ok()) return result;
    data_file = std::move(loaded).value();
    // Every blob the file names, read end to end (ASan sees any read outside).
    for (std::string_view key : data_file->keys()) {
      const Result<std::span<const uint8_t>> blob = data_file->find(key);
      volatile uint8_t sum = 0;
      for (uint8_t b : *blob) sum = sum ^ b;
      (void)data_file->layout(key);
    }
  }
  auto program = Program::load(ProgramBytes::copy_of(bytes), data_file);
  if (!program.ok()) return result;
  result.program_loaded = true;
  for (const std::string& name : (*program)->method_names()) {
    const Outcome outcome = run_method(*program, name, hash_of(bytes), options);
    result.methods_loaded += outcome.loaded;
    result.methods_executed += outcome.executed;
  }
  if ((*program)->bundled_tests() != nullptr && options.execute) {
    // A bundle's test cases: inputs and expectations as hostile as the program.
    VerifyOptions verify;
    verify.method_options.max_planned_bytes = options.max_bytes;
    (void)verify_bundled(*program, verify).ok();
  }
  return result;
}

}  // namespace et::testing
