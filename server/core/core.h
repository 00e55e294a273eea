// The daemon's core, independent of transport: sessions, the program registry,
// segments, method instances, and calls. One function is the way a call enters it:
// Core::call (server/core/call.h). Transports adapt to it: the et protocol
// (server/transport/etproto/, over gRPC and the fast path) and KServe (server/kserve/).
// It speaks runtime types only; errors are et::Status values, which transports turn into
// their protocol's codes.
//
// Thread-safety: every method may be called from any thread. A session's requests may
// arrive concurrently; one method instance runs on one thread at a time, different
// instances in parallel (up to `max_concurrent_runs`).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "port/mutex.h"
#include "runtime/devtools/bundled_verify.h"
#include "server/core/call.h"
#include "server/core/session.h"
#include "server/core/shared_programs.h"
#include "server/core/vetting/vetting.h"
#include "server/metrics/metrics.h"

namespace et::server {
struct ServiceLimits {
  size_t max_sessions = 256;
  size_t max_segment_bytes_per_session = size_t{4} << 30;  // mapped, dropped or not
  size_t max_segments_per_session = 1024;
  // Below 2 GiB: flatbuffers cannot read a buffer of 2^31 - 1 bytes or more.
  size_t max_program_bytes = size_t{2047} << 20;
  // Planned memory plus unplanned output buffers of one method instance.
  uint64_t max_method_bytes = uint64_t{8} << 30;
  // --rt-mlock: a method instance's planned memory is written at load, so with the
  // daemon's memory locked no execute waits on a page fault for it.
  bool prefault_method_memory = false;
  size_t max_concurrent_runs = 0;                      // 0: one per compute thread
  std::chrono::milliseconds request_deadline{60'000};  // waiting for a busy method or worker
  // One execute, checked between instructions; a session that ends stops its executes.
  std::chrono::milliseconds execution_deadline{60'000};
  uint64_t max_instructions = 100'000'000;  // per execute, jumps included
  // --vet: programs from clients that the daemon has not seen are first loaded and run
  // in a sandboxed child (server/core/vetting/vetting.h); `vet_binary` is the daemon's own binary.
  bool vet = true;
  std::string vet_binary;
  // Per client: sessions from one TCP host (the Unix socket admits one uid, whose
  // sessions max_sessions bounds), and what one session may hold or run at once.
  size_t max_sessions_per_peer = 64;
  size_t max_programs_per_session = 1024;
  uint64_t max_program_bytes_per_session = uint64_t{8} << 30;
  size_t max_methods_per_session = 256;
  size_t max_calls_per_session = 32;
  // --idle-exit: the daemon exits after this long with no session (0: never).
  std::chrono::seconds idle_exit{0};
  // --keep-programs-seconds / --keep-programs-bytes: programs stay loaded this long
  // after their last session let them go, within this many bytes (SharedPrograms::
  // keep_warm): the next process to load one finds it ready.
  std::chrono::seconds keep_programs{300};
  uint64_t keep_programs_bytes = uint64_t{1} << 30;
  // --socket-group: local users the daemon serves besides its own and root (-1: none).
  int64_t socket_group = -1;
};

// Where the bytes of a program (or its data file) come from: sent inline, or a range
// of one of the session's segments.
struct SegmentRange {
  uint64_t segment_id = 0, offset = 0, length = 0;
};
using ByteSource = std::variant<std::span<const uint8_t>, SegmentRange>;

// How LoadProgram names a program (proto/et_serverd.proto's LoadProgramRequest).
struct ProgramByHash {};  // the daemon has it: `sha256` (and `data_sha256`) name it
struct ProgramByName {    // a program the daemon preloaded
  std::string name;
};
struct ProgramSource {
  std::variant<ProgramByHash, ProgramByName, ByteSource> program;
  std::optional<ByteSource> data;   // its .ptd data file, sent with its bytes
  std::string sha256, data_sha256;  // as the client states them (may be empty)
};

// A program in a session.
struct SessionProgram {
  uint64_t id = 0;
  std::shared_ptr<const SharedProgram> program;
};

// Counts of the daemon's state (ServerStatus).
struct DaemonCounts {
  uint64_t sessions = 0, programs = 0, method_instances = 0, segments = 0, segment_bytes = 0;
  uint64_t resident_bytes = 0, threads = 0, executes = 0, program_loads = 0,
           program_loads_shared = 0;
};

class Core {
 public:
  explicit Core(ServiceLimits limits);
  ~Core();

  SharedPrograms& shared_programs() { return registry_; }
  static const char* version();
  // Random, new at each start of the daemon (SessionServerMessage.daemon_instance).
  const std::string& instance() const { return instance_; }
  // Since the daemon started.
  std::chrono::seconds uptime() const;

  // ---- The one way a call enters the core ----
  // Runs `req`: resolves its target (a session's method: the session, its --max-calls
  // count, the handle), waits for the instance and then for a worker (both within the
  // request deadline), does its work holding both, and gives them back. Errors:
  // Unavailable while the daemon shuts down; Unauthenticated for a token no session has;
  // ResourceExhausted at --max-calls; NotFound for a handle the session lacks or an
  // instance dropped meanwhile; DeadlineExceeded when the instance or a worker stayed
  // busy past the request deadline; the work's own errors (an execute is bounded by the
  // execution deadline and stopped when the session ends).
  Status call(CallRequest& req);

  // ---- Sessions ----
  // open_session fails with ResourceExhausted at max_sessions (or at
  // max_sessions_per_peer for one TCP host, or one uid other than the daemon's).
  // `client_name` names the session in the log; `owner.host` (a TCP host) or a local
  // uid other than the daemon's is what the per-peer limit counts.
  Result<std::shared_ptr<Session>> open_session(const std::string& client_name,
                                                const SessionOwner& owner = {});
  // Ok when `caller` may name the session `token`: a local session only by a caller of
  // its uid. Otherwise the same error as for a token no session has (a token seen by
  // another user is of no use to them, and they cannot tell it from a wrong one).
  Status check_caller(const std::string& token, const SessionOwner& caller) const;
  // Releases everything the session holds; waits for its running calls to finish.
  void close_session(const std::shared_ptr<Session>& session);
  // The session named by `token`; Unauthenticated when none (or it closed).
  Result<std::shared_ptr<Session>> find_session(std::string_view token) const;

  // ---- Segments (from the descriptor socket) ----
  // Takes ownership of `fd` in every case.
  Result<uint64_t> register_segment(const std::string& token, int fd);
  // Methods whose inputs point into it keep the mapping (and its charge) until rebound.
  Status drop_segment(const std::string& token, uint64_t segment_id);

  // ---- Programs ----
  // Loading "by path": the client opens the file itself and hands over the descriptor,
  // so the daemon reads only what the caller could read. Returns the session's program
  // id. Takes ownership of `fd`.
  Result<uint64_t> load_program_fd(const std::string& token, int fd);
  // Adds a program to the session (verified and registered when new to the daemon).
  // `already_loaded`: the daemon or the session had it.
  struct LoadedProgram {
    SessionProgram program;
    bool already_loaded = false;
  };
  Result<LoadedProgram> load_program(const std::string& token, const ProgramSource& source);
  Result<std::vector<SessionProgram>> session_programs(const std::string& token) const;
  Result<SessionProgram> session_program(const std::string& token, uint64_t program_id) const;
  // Runs a bundled program's test cases (runtime/devtools/bundled_verify.h) with `options`'
  // method, tolerance; each execute bounded by the execution limits, all of them
  // together by the request deadline (cases left unrun are reported DeadlineExceeded).
  Result<VerifyReport> verify_program(const std::string& token, uint64_t program_id,
                                      VerifyOptions options);
  // Drops the program's methods (each once its running call ends) and lets it go.
  Status unload_program(const std::string& token, uint64_t program_id);

  // ---- Method instances ----
  // A method instance of a session's program; its handle and the method's description.
  struct LoadedMethod {
    uint64_t handle = 0;
    MethodMeta meta;
  };
  Result<LoadedMethod> load_method(const std::string& token, uint64_t program_id,
                                   const std::string& method_name);
  Status drop_method(const std::string& token, uint64_t handle);
  // A method instance of `program` that no session holds (the caller keeps it, and calls
  // it as a HeldInstance), loaded with load_method's limits and output buffers. Errors:
  // Method::load's, ResourceExhausted over --max-method-bytes.
  Result<std::shared_ptr<MethodSlot>> load_instance(std::shared_ptr<const SharedProgram> program,
                                                    const std::string& method_name);
  // Warm-up: runs every method of `program` once on zeros (server/core/zero_run.h) in
  // an instance of its own, within the execution deadline, so that the program's shared
  // work (XNNPACK's compiled graphs, its weights' pages) is done before a caller's first
  // call. Logs each method's time; a method that cannot run on zeros is logged (and the
  // program still served). Returns how many methods ran.
  size_t warm_up(const std::string& model, const SharedProgram& program);

  // ---- Profiles (StartProfile is a call: a HoldWork that sets slot.profiling) ----
  // Takes the profiles of the session's methods `handles` (several: merged, in order).
  // Every profile is taken, or none: FailedPrecondition naming a method not being
  // profiled; with `for_etdump`, ResourceExhausted when together they hold more events
  // than one ETDump does.
  Result<std::unique_ptr<MethodSlot::Profiling>> take_profiles(const std::string& token,
                                                               std::span<const uint64_t> handles,
                                                               bool for_etdump);

  // The longest a call may take before the daemon answers it (request deadline plus
  // execution deadline): clients bound their waits with it.
  std::chrono::milliseconds call_deadline() const {
    return limits_.request_deadline + limits_.execution_deadline;
  }

  // ---- Attachments (what a transport runs per session: fast-path channels) ----
  // The session for a call of `token`: Unavailable while the daemon shuts down,
  // Unauthenticated when no session has the token. Notes it in the call's metrics scope.
  Result<std::shared_ptr<Session>> session(std::string_view token) const {
    return session_for(token);
  }
  // Builds, under the session's lock, what `open` makes of the session (given how many
  // attachments the session and the daemon have live; `on_finished` must run once, on
  // the attachment's thread as it ends), and attaches it: the session's closing stops
  // and joins it. Errors: Unauthenticated once the session closed; `open`'s.
  using AttachmentOpener = std::function<Result<std::shared_ptr<SessionAttachment>>(
      Session& s, size_t in_session, size_t in_all, std::function<void()> on_finished)>;
  Status attach(Session& s, const AttachmentOpener& open);

  // Housekeeping the daemon's main loop runs now and then: lets go of programs kept
  // warm for longer than keep_programs.
  void tick() { registry_.drop_expired(); }
  // Stops accepting new calls (Unavailable) and new sessions; running calls finish.
  void begin_shutdown() {
    shutting_down_ = true;
    registry_.stop_waiting();
  }
  // How long the daemon has had no session (since its start or its last session
  // closed); zero while any session is open.
  std::chrono::steady_clock::duration idle_for() const;
  // begin_shutdown() if no session is open, in one step with open_session(): a session
  // either opened before (and this returns false) or is refused as shutting down.
  bool begin_shutdown_if_idle();
  // Idle time counts from now (when the daemon starts listening: a long --models
  // preload is not idleness).
  void restart_idle_clock();
  bool shutting_down() const { return shutting_down_; }
  // Ready: the model repository has loaded what it loads at start and the daemon is not
  // stopping (health checks, KServe's ServerReady). False until set_ready(true).
  bool ready() const { return ready_ && !shutting_down_; }
  void set_ready(bool ready) { ready_ = ready; }

  // The limits the daemon runs with.
  const ServiceLimits& limits() const { return limits_; }
  // The calls' metrics (transports open a metrics::CallScope on it for each call).
  metrics::Metrics& metrics() { return metrics_; }
  // Open sessions, and live attachments (fast-path channels: the metrics page).
  size_t session_count() const;
  size_t attachment_count() const { return attachments_.load(); }
  DaemonCounts counts() const;

 private:
  Result<std::shared_ptr<Session>> session_for(std::string_view token) const;
  Result<std::shared_ptr<const SharedProgram>> program_for(Session& s, uint64_t id) const;
  Result<std::shared_ptr<MethodSlot>> method_for(Session& s, uint64_t handle) const;
  SegmentLookup segment_lookup(const std::shared_ptr<Session>& s) const;
  // The bytes `from` names, and the segment that holds them (if any); errors name `field`.
  Result<std::span<const uint8_t>> bytes_of(const std::shared_ptr<Session>& s,
                                            const ByteSource& from, const char* field,
                                            std::shared_ptr<Segment>& holder) const;
  // Adds `program` to the session (once); returns its id there.
  Result<uint64_t> attach_program(Session& s, std::shared_ptr<const SharedProgram> program,
                                  bool* already_attached = nullptr);
  // Runs `fn` holding the slot and a worker, waiting for each at most until the request
  // deadline from now or the call's own, whichever comes first; `queued_ns` receives the
  // wait. A call whose deadline passed, or whose caller went away, by the time it holds
  // both does not run.
  Status hold(MethodSlot& slot, uint64_t& queued_ns, const std::function<Status()>& fn,
              const CallBounds& bounds = {});
  // Takes one of the max_concurrent_runs workers once one is free (DeadlineExceeded at
  // `deadline`); a WorkerHold made right after gives it back, however the work ends.
  // Every execute runs on one: calls (through hold) and VerifyProgram's cases.
  Status take_worker(std::chrono::steady_clock::time_point deadline);
  struct WorkerHold {
    Core& core;
    ~WorkerHold();
  };
  // The work of a call, holding `slot`.
  Status run(MethodSlot& slot, const SegmentLookup& segments, const std::atomic<bool>& cancelled,
             RunWork& work, CallRequest& call);
  Status generate(MethodSlot& slot, const std::atomic<bool>& cancelled, GenerateWork& work,
                  uint64_t& queued_ns);
  int64_t program_context(MethodSlot& slot, const std::atomic<bool>& cancelled) const;
  Status prepare_outputs(MethodSlot& slot);
  // How a session's or a model's method instance is loaded: the daemon's limits.
  MethodOptions method_options() const {
    return {.max_planned_bytes = limits_.max_method_bytes,
            .prefault = limits_.prefault_method_memory};
  }
  // Executes the slot's method (the execution deadline, or the call's when sooner;
  // `cancelled`, or the call's caller going away, stops it).
  Status execute_locked(const std::atomic<bool>& cancelled, MethodSlot& slot, uint64_t& ns,
                        const CallBounds& bounds = {});
  // Forgets the attachments of every session whose threads have ended (fast-path
  // channels whose links closed): they count against the limits until then.
  void reap_attachments();
  // Counts a call of `s` for its duration; ResourceExhausted at max_calls_per_session.
  class CallCount;
  // Counts a program load of a session for ServerStatus (nothing when `attached`: the
  // session held it already); `existed`: the daemon had it loaded.
  void count_load(bool existed, bool attached);
  // Ok when `more` bytes of programs fit the session's limit.
  Status program_bytes_fit(const Session& s, uint64_t more) const ET_REQUIRES(s.mu);

  ServiceLimits limits_;
  metrics::Metrics metrics_;
  SharedPrograms registry_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<bool> ready_{false};
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  const std::string instance_;
  std::unique_ptr<Vetter> vetter_;  // --vet

  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<Session>, std::less<>> sessions_
      ET_GUARDED_BY(mu_);  // by token
  uint64_t next_session_ ET_GUARDED_BY(mu_) = 1;
  std::chrono::steady_clock::time_point idle_since_ ET_GUARDED_BY(mu_) = started_;

  // Live attachments of all sessions (their threads).
  std::atomic<size_t> attachments_{0};

  // Counts for ServerStatus: executes run, and programs loaded into a session (shared:
  // the daemon had the program loaded already, for another session or preloaded).
  std::atomic<uint64_t> executes_{0};
  std::atomic<uint64_t> program_loads_{0};
  std::atomic<uint64_t> program_loads_shared_{0};

  // Workers: at most limits_.max_concurrent_runs executions at once.
  Mutex run_mu_;
  std::condition_variable run_cv_;
  size_t running_ ET_GUARDED_BY(run_mu_) = 0;
};

}  // namespace et::server
