// One executable instance of a method: its values, its planned memory, the inputs
// bound to it, its outputs.
//
// Lifecycle: load() -> set_inputs() (or set_input() for each) -> execute() ->
// output(i), repeatedly. Mutable buffers keep their state across executions of the
// same instance.
//
// Ownership: the Method holds its Program (and so the program's bytes). A planned
// input is COPIED into the method's memory by set_input(); an unplanned input (one
// exported with alloc_graph_input=False) is POINTED AT: the caller's memory must stay
// valid and unchanged until the input is replaced or the method is dropped, and the
// method may write it if the program writes its input (read-only memory is copied
// instead). Outputs are owned by the method and valid until the next execute().
//
// Memory: every tensor carries the bytes that back it (tensor.h). What an execute
// changes in the value table (frees, moves, view aliases) is undone before the next
// set_input()/execute(), so nothing of one call can point into memory freed or rebound
// since; inputs are bound through the tensors resolved at load, never through the
// (mutable) value table.
//
// Thread-safety: none. One thread at a time per instance; distinct instances of one
// program may run concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/input.h"
#include "runtime/core/kernel.h"
#include "runtime/core/method_meta.h"
#include "runtime/core/profile.h"
#include "runtime/core/program.h"
#include "runtime/core/status.h"
#include "runtime/core/value.h"

namespace et {

// Bounds on one execute(), checked between instructions (a kernel already running
// finishes first; the deadline every 16 instructions).
struct ExecuteLimits {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* cancelled = nullptr;  // stops the execute once set
  // Instructions one execute may run, all chains and jumps counted (a program whose
  // jumps loop for ever ends here at the latest).
  uint64_t max_instructions = 100'000'000;
  // Asked with the deadline, every 16 instructions: true once the caller went away (a
  // gRPC client that cancelled its call). Must be cheap and thread-safe; null: never.
  bool (*caller_gone)(const void* arg) = nullptr;
  const void* caller_gone_arg = nullptr;
};

struct MethodOptions {
  const KernelRegistry* kernels = nullptr;    // nullptr: KernelRegistry::global()
  const BackendRegistry* backends = nullptr;  // nullptr: BackendRegistry::global()
  // A program states how much memory its methods plan; one above this is refused
  // rather than allocated (a hostile program could ask for terabytes).
  uint64_t max_planned_bytes = uint64_t{16} << 30;
  // Writes every page of the planned memory at load, so no execute waits on a page
  // fault for it (and a process that locked its memory with mlockall(MCL_ONFAULT)
  // holds those pages locked from load on). Off: the pages come at first use.
  bool prefault = false;
};

class Method {
 public:
  // Loads method `name` of `program` with its own planned memory.
  // Errors: NotFound for an unknown method; NotFound listing EVERY operator the
  // registry lacks (and every missing backend); ResourceExhausted for planned memory
  // above options.max_planned_bytes or not allocatable; errors of backend init.
  static Result<std::unique_ptr<Method>> load(std::shared_ptr<const Program> program,
                                              std::string_view name,
                                              const MethodOptions& options = {});

  ~Method();
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;

  const MethodMeta& meta() const { return *meta_; }
  const Program& program() const { return *program_; }
  size_t num_inputs() const { return input_indices_.size(); }
  size_t num_outputs() const { return output_indices_.size(); }
  // Bytes of planned memory this instance holds.
  uint64_t planned_bytes() const { return planned_bytes_; }

  // Binds input `index`. Errors are those of check_tensor_input(), a kind mismatch,
  // or a scalar that differs from the traced value. On error the input is unset and
  // the method refuses to execute until it is set again.
  Status set_input(size_t index, const InputValue& input);

  // Binds every input at once. On error, no input counts as set (all must be given
  // again) and the error names the failing input.
  Status set_inputs(std::span<const InputValue> inputs);

  // Gives an unplanned output (alloc_graph_output=False) the memory to write into.
  // REQUIRES: `nbytes` >= the output's nbytes at its upper-bound shape.
  Status set_output_buffer(size_t index, void* data, size_t nbytes);

  // Runs the method. FailedPrecondition naming the unset inputs (or outputs without
  // a buffer) when not ready; otherwise the first failing instruction's error, with
  // its position and operator. DeadlineExceeded past limits.deadline, Unavailable
  // once limits.cancelled is set; ResourceExhausted after limits.max_instructions.
  // With `profile`, once the inputs are ready it is reset and then receives the
  // execute's times: every kernel and delegate instruction, and the steps delegates
  // report (runtime/core/profile.h); events recorded before an error stay.
  Status execute(const ExecuteLimits& limits = {}, ExecuteProfile* profile = nullptr);

  // Output `index` of the last successful execute(). FailedPrecondition before one,
  // or after an input changed since.
  Result<const Value*> output(size_t index) const;

  // The tensor the program names `name` (a mutable buffer's state as the last execute
  // left it, or a constant), valid until the next execute() or set_input(). NotFound
  // naming the attributes the method has.
  Result<const Tensor*> attribute(std::string_view name) const;

  // True when output `index` is one of the method's inputs (same value).
  bool output_is_input(size_t index) const;

 private:
  struct Step;
  Method() = default;
  Status build_values();
  Status build_steps(const KernelRegistry& kernels, const BackendRegistry& backends);
  Status bind_tensor_input(size_t index, const TensorView& view);
  template <bool kProfiled>
  Status run_chain(size_t chain, const ExecuteLimits& limits, uint64_t& budget,
                   ExecuteProfile* profile);
  // The tensor arguments of a kernel step, for its profile event.
  static std::string tensor_args(const Step& step);
  // Records where each tensor's memory lives at rest, and what moves may overwrite.
  void record_homes();
  // Undoes what the last execute changed in the value table (see the header comment).
  void undo_execution_changes();

  // Where a tensor's memory lives between executes: planned memory, a constant, a
  // bound input, an output buffer, or none.
  struct Home {
    void* data = nullptr;
    size_t capacity = 0;
    bool constant = false;
  };
  void set_home(Tensor& tensor, void* data, size_t capacity);

  std::shared_ptr<const Program> program_;
  const MethodMeta* meta_ = nullptr;
  const void* plan_ = nullptr;  // fb::ExecutionPlan

  std::vector<Value> values_;
  std::vector<Tensor> tensors_;
  std::vector<IntListStorage> int_lists_;
  std::vector<TensorListStorage> tensor_lists_;
  std::vector<std::unique_ptr<uint8_t, void (*)(void*)>> buffers_;       // planned memory
  std::vector<std::unique_ptr<uint8_t, void (*)(void*)>> input_copies_;  // read-only inputs
  std::vector<std::vector<Step>> chains_;
  std::vector<std::unique_ptr<DelegateInstance>> delegates_;
  std::vector<std::string> op_names_;
  TempArena temp_;

  std::vector<Home> homes_;                              // per tensors_ entry
  std::vector<std::pair<int32_t, Value>> move_targets_;  // value index, value at load
  std::vector<Tensor*> rebound_;  // tensors an execute pointed elsewhere (views, frees)
  bool moved_ = false;            // an execute ran a move

  std::vector<int32_t> input_indices_;
  std::vector<int32_t> output_indices_;
  std::vector<Tensor*> input_tensors_;   // per input: its tensor (nullptr: not a tensor)
  std::vector<Tensor*> output_tensors_;  // per output: its tensor at load (or nullptr)
  std::vector<bool> input_set_;
  std::vector<bool> output_buffer_set_;  // per output; true for planned outputs
  bool has_outputs_ = false;
  uint64_t planned_bytes_ = 0;
};

}  // namespace et
