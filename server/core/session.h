// One client connection's state: its programs, method instances and segments.
// Everything here is released when the session ends (Core::close_session).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "port/mutex.h"
#include "runtime/core/method.h"
#include "runtime/core/profile.h"
#include "runtime/llm/generation.h"
#include "server/core/decoded_input.h"
#include "server/core/segment.h"
#include "server/core/shared_programs.h"
#include "server/metrics/metrics.h"

namespace et::server {

// A method instance and what its bound inputs point into. One call at a time holds
// the slot (`busy`), so an instance never runs on two threads at once; others wait on
// `freed` up to their deadline. (A flag and a condition variable rather than a timed
// mutex: ThreadSanitizer does not model timed locks and would report false errors.)
struct MethodSlot {
  MethodSlot() { live().fetch_add(1, std::memory_order_relaxed); }
  ~MethodSlot() { live().fetch_sub(1, std::memory_order_relaxed); }
  MethodSlot(const MethodSlot&) = delete;
  MethodSlot& operator=(const MethodSlot&) = delete;
  // Method instances alive in this process (the metrics page).
  static int64_t live_instances() { return live().load(std::memory_order_relaxed); }

  Mutex mu;
  std::condition_variable freed;
  bool busy ET_GUARDED_BY(mu) = false;

  // Used only by the call holding the slot (busy), or with the slot idle under mu.
  std::unique_ptr<Method> method;
  std::shared_ptr<const SharedProgram> program;  // keeps the program loaded
  std::vector<DecodedInput> inputs;
  GenerationBuffers generation;    // what Generate's bound inputs point into
  std::optional<int64_t> context;  // the program's get_max_context_len (0: none), once asked
  // Unplanned outputs' memory: calloc'd, so pages are touched only when written.
  std::vector<std::unique_ptr<uint8_t, void (*)(void*)>> output_buffers;
  // StartProfile..StopProfile: the executes profiled so far (nullptr: not profiling).
  struct Profiling {
    // Events kept in all (about 100 bytes each): later executes are dropped.
    static constexpr uint64_t kMostEvents = 2'000'000;
    size_t max_executes = 0;
    uint64_t dropped = 0;
    uint64_t events = 0;
    std::vector<ExecuteProfile> executes;
  };
  std::unique_ptr<Profiling> profiling;
  // The metrics series of this instance's calls, by transport (metrics::CallScope).
  std::array<std::atomic<metrics::CallSeries*>, metrics::kTransports> metric_series{};

  // Waits until no call holds the slot, then runs `fn` with mu held (for teardown).
  template <typename F>
  void when_idle(F fn) {
    MutexLock lock(mu);
    lock.wait(freed, [this]() ET_REQUIRES(mu) { return !busy; });
    fn();
  }

 private:
  static std::atomic<int64_t>& live() {
    static std::atomic<int64_t> n{0};
    return n;
  }
};

// What a transport attaches to a session and runs on a thread of its own (a fast-path
// channel): stopped when the session closes, joined once the session's method calls are
// done, and forgotten once finished.
class SessionAttachment {
 public:
  virtual ~SessionAttachment() = default;
  virtual void stop() = 0;            // non-blocking; a call being served finishes
  virtual void join() = 0;            // waits for its thread; not from that thread
  virtual bool finished() const = 0;  // its thread has returned
};

// Who opens a session: a process on this machine (its uid and pid from the Unix
// socket, SO_PEERCRED) or a TCP peer (`local` false, `host` its address).
struct SessionOwner {
  bool local = false;
  uid_t uid = 0;
  pid_t pid = 0;
  std::string host;  // a TCP peer's host, without the port; empty for any other caller

  static SessionOwner local_process(uid_t uid, pid_t pid) {
    SessionOwner o;
    o.local = true;
    o.uid = uid;
    o.pid = pid;
    return o;
  }
  static SessionOwner tcp_peer(std::string host) {
    SessionOwner o;
    o.host = std::move(host);
    return o;
  }
};

struct Session {
  uint64_t number = 0;
  SessionOwner owner;  // only a caller of the same uid may name a local session
  std::string token;
  std::string client_name;
  std::string peer_key;                // the TCP host it came from; empty for local
  std::atomic<bool> cancelled{false};  // set when the session ends: stops its executes
  std::atomic<uint32_t> calls_running{0};

  Mutex mu;
  bool closed ET_GUARDED_BY(mu) = false;
  uint64_t next_id ET_GUARDED_BY(mu) = 1;  // ids of programs, methods and segments
  std::map<uint64_t, std::shared_ptr<const SharedProgram>> programs ET_GUARDED_BY(mu);
  uint64_t program_bytes ET_GUARDED_BY(mu) = 0;  // the size of every program held
  std::map<uint64_t, std::shared_ptr<MethodSlot>> methods ET_GUARDED_BY(mu);
  std::map<uint64_t, std::shared_ptr<Segment>> segments ET_GUARDED_BY(mu);
  std::vector<std::shared_ptr<SessionAttachment>> attachments ET_GUARDED_BY(mu);
  // Bytes of this session's segments still mapped: registered ones, and dropped ones
  // that a bound input still holds. Counted by the segments themselves.
  std::shared_ptr<std::atomic<uint64_t>> mapped_bytes = std::make_shared<std::atomic<uint64_t>>(0);
};

}  // namespace et::server
