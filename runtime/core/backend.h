// Backends: delegates that run part of a method (DelegateCall instructions).
//
// A backend is registered under its delegate id (e.g. "XnnpackBackend"). For every
// DelegateCall of a method instance, Method::load() asks the backend for a
// DelegateInstance. Work that does not depend on the instance (parsing the payload,
// packing weights) belongs in program.backend_cache(), so every instance of every
// method of one program shares it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "port/mutex.h"
#include "runtime/core/kernel.h"
#include "runtime/core/status.h"

namespace et {

class Program;

struct DelegateSpec {
  const Program* program = nullptr;  // outlives every instance made from it
  std::string_view method;
  uint32_t delegate_index = 0;       // index in the method's delegate table
  std::span<const uint8_t> payload;  // the processed blob, inside the program's bytes
  std::vector<std::pair<std::string_view, std::span<const uint8_t>>> compile_specs;
};

// One delegate of one method instance. Thread-safety: one thread at a time, like
// the Method that owns it.
class DelegateInstance {
 public:
  virtual ~DelegateInstance() = default;
  // Runs the delegate. ctx's arguments are the DelegateCall's: inputs then outputs.
  virtual Status execute(KernelContext& ctx) = 0;
};

// A process-wide figure a backend reports about itself (the daemon's metrics page
// shows each as a gauge).
struct BackendGauge {
  std::string name;  // a Prometheus metric name, e.g. et_serverd_xnnpack_replicas
  std::string help;
  double value = 0;
};

// Thread-safety: every method may be called concurrently (init() for different methods).
class Backend {
 public:
  virtual ~Backend() = default;
  // Errors name what the backend cannot run (e.g. the node type) and never crash.
  virtual Result<std::unique_ptr<DelegateInstance>> init(const DelegateSpec& spec) const = 0;
  // Does once what the backend would otherwise do on first use and a sandbox forbids
  // (reading /proc or /sys, starting threads): the daemon's vetting child calls it
  // before its filter goes on. Idempotent. Default: nothing to do.
  virtual Status prepare() const { return Status(); }
  // The backend's figures now (weights packed, runtimes held). Default: none.
  virtual std::vector<BackendGauge> gauges() const { return {}; }
};

// Backends by delegate id. Thread-safe.
class BackendRegistry {
 public:
  static BackendRegistry& global();
  Status add(std::string id, std::shared_ptr<const Backend> backend);
  std::shared_ptr<const Backend> find(std::string_view id) const;  // nullptr when missing
  std::vector<std::string> ids() const;
  // Every registered backend, in id order.
  std::vector<std::shared_ptr<const Backend>> all() const;

 private:
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<const Backend>, std::less<>> backends_ ET_GUARDED_BY(mu_);
};

}  // namespace et
