// One KServe model: a method of a program the daemon has, with the tensors KServe
// clients see (names, datatypes, shapes), a few method instances to run it on, and
// the statistics ModelStatistics reports. docs/kserve.md gives the naming rules:
// inputs "input__0", "input__1", ... and outputs "output__0", ... by position; an int,
// float or bool input or output is a tensor of shape [1] (INT64, FP64, BOOL).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "port/mutex.h"
#include "runtime/core/method_meta.h"
#include "server/core/core.h"

namespace et::server::kserve {

// KServe's name of a dtype ("FP32"), or empty when KServe has none.
std::string_view datatype_name(ScalarType type);

struct TensorSpec {
  std::string name;      // "input__0", "output__2"
  std::string datatype;  // "FP32", ...
  ScalarType dtype = ScalarType::kFloat;
  ValueKind kind = ValueKind::kTensor;  // a scalar kind: sent as a tensor of shape [1]
  std::vector<int64_t> shape;           // -1 for each dim of a dynamically shaped tensor
  std::vector<int64_t> max_shape;       // the upper bounds
  std::vector<uint8_t> dim_order;       // the program's layout (KServe's is row-major)
  size_t index = 0;                     // the method's input or output position
};

struct DurationStat {
  uint64_t count = 0, ns = 0;
  void add(uint64_t d) {
    ++count;
    ns += d;
  }
};

struct ModelStats {
  DurationStat success, fail, queue, compute_input, compute_infer, compute_output;
  uint64_t inference_count = 0, execution_count = 0;
  uint64_t last_inference_ms = 0;  // since the epoch
};

class Model {
 public:
  // The model `name` (at `version`) for method `method` of `program` (which the
  // repository serves as model `program_model`): describes its tensors and loads
  // its first instance (so that a program that cannot run is reported at once).
  // NotSupported when an input or output has no KServe form (a string, a list, a dtype
  // KServe lacks); Method::load's errors.
  static Result<std::shared_ptr<Model>> create(Core& core, std::string name, std::string version,
                                               std::string program_model,
                                               std::shared_ptr<const SharedProgram> program,
                                               std::string method, size_t max_instances);

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& program_model() const { return program_model_; }
  const std::string& method() const { return method_; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  size_t method_inputs() const { return method_inputs_; }  // including None inputs
  const std::shared_ptr<const SharedProgram>& program() const { return program_; }

  // An instance to run a call on, held until the Lease is dropped: an idle one, a new
  // one while fewer than max_instances exist, else the least used (the call then waits
  // for it, up to the request deadline).
  class Lease {
   public:
    Lease(Model& model, std::shared_ptr<MethodSlot> slot)
        : model_(&model), slot_(std::move(slot)) {}
    Lease(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    MethodSlot& slot() const { return *slot_; }

   private:
    Model* model_;
    std::shared_ptr<MethodSlot> slot_;
  };
  Result<Lease> lease();

  void record(bool ok, const CallTimes& t, uint64_t total_ns);
  ModelStats stats() const;
  size_t instances() const;

 private:
  Model(Core& core) : core_(core) {}
  struct Instance {
    std::shared_ptr<MethodSlot> slot;
    size_t users = 0;
  };

  Core& core_;
  std::string name_, version_, program_model_, method_;
  std::shared_ptr<const SharedProgram> program_;
  std::vector<TensorSpec> inputs_, outputs_;
  size_t method_inputs_ = 0;
  size_t max_instances_ = 1;

  mutable Mutex mu_;
  std::vector<Instance> instances_ ET_GUARDED_BY(mu_);
  size_t creating_ ET_GUARDED_BY(mu_) = 0;  // instances being loaded
  ModelStats stats_ ET_GUARDED_BY(mu_);
};

}  // namespace et::server::kserve
