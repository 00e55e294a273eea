#include "server/core/core.h"

#include <unistd.h>

#include <map>

#include "runtime/core/thread_pool.h"
#include "server/core/core_internal.h"
#include "server/core/system.h"

namespace et::server {

const char* Core::version() { return "0.1.0"; }

Core::Core(ServiceLimits limits) : limits_(limits), instance_(random_token()) {
  if (limits_.max_concurrent_runs == 0)
    limits_.max_concurrent_runs = ThreadPool::global().threads();
  registry_.set_keep_warm(limits_.keep_programs, limits_.keep_programs_bytes);
  if (limits_.vet && !limits_.vet_binary.empty()) {
    vetter_ = std::make_unique<Vetter>(
        limits_.vet_binary,
        VetLimits{limits_.max_method_bytes, limits_.execution_deadline, limits_.max_instructions});
    registry_.set_vetter(
        [v = vetter_.get()](std::span<const uint8_t> program, std::span<const uint8_t> data,
                            const std::string& key) { return v->vet(program, data, key); });
  }
}

Core::~Core() {
  std::map<std::string, std::shared_ptr<Session>, std::less<>> left;
  {
    MutexLock lock(mu_);
    left.swap(sessions_);
  }
  for (auto& [token, s] : left) close_session(s);
}

std::chrono::seconds Core::uptime() const {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                          started_);
}

size_t Core::session_count() const {
  MutexLock lock(mu_);
  return sessions_.size();
}

std::chrono::steady_clock::duration Core::idle_for() const {
  MutexLock lock(mu_);
  if (!sessions_.empty()) return {};
  return std::chrono::steady_clock::now() - idle_since_;
}

bool Core::begin_shutdown_if_idle() {
  {
    MutexLock lock(mu_);
    if (!sessions_.empty()) return false;
    shutting_down_ = true;
  }
  registry_.stop_waiting();
  return true;
}

void Core::restart_idle_clock() {
  MutexLock lock(mu_);
  idle_since_ = std::chrono::steady_clock::now();
}

DaemonCounts Core::counts() const {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    MutexLock lock(mu_);
    for (const auto& [token, s] : sessions_) sessions.push_back(s);
  }
  DaemonCounts c;
  for (const auto& s : sessions) {
    MutexLock lock(s->mu);
    c.method_instances += s->methods.size();
    c.segments += s->segments.size();
    c.segment_bytes += *s->mapped_bytes;
  }
  c.sessions = sessions.size();
  c.programs = registry_.size();
  c.resident_bytes = resident_bytes();
  c.threads = ThreadPool::global().threads();
  c.executes = executes_.load(std::memory_order_relaxed);
  c.program_loads = program_loads_.load(std::memory_order_relaxed);
  c.program_loads_shared = program_loads_shared_.load(std::memory_order_relaxed);
  return c;
}

void Core::count_load(bool existed, bool attached) {
  if (attached) return;  // the session had it: not a load
  program_loads_.fetch_add(1, std::memory_order_relaxed);
  if (existed) program_loads_shared_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace et::server
