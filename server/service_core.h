// The daemon's service, independent of transport: sessions, the program registry,
// segments, method instances and calls. Transports (server/grpc_service.cc, the
// descriptor socket) adapt to it; errors are et::Status values, turned into protocol
// codes in exactly one place (grpc_service.cc).
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
#include <mutex>
#include <string>
#include <vector>

#include "et_serverd.pb.h"
#include "port/mutex.h"
#include "server/fast_channel.h"
#include "server/metrics/metrics.h"
#include "server/program_registry.h"
#include "server/session.h"
#include "server/vetting.h"

namespace et::server {

struct ServiceLimits {
  size_t max_sessions = 256;
  size_t max_segment_bytes_per_session = size_t{4} << 30;  // mapped, dropped or not
  size_t max_segments_per_session = 1024;
  // Below 2 GiB: flatbuffers cannot read a buffer of 2^31 - 1 bytes or more.
  size_t max_program_bytes = size_t{2047} << 20;
  // Planned memory plus unplanned output buffers of one method instance.
  uint64_t max_method_bytes = uint64_t{8} << 30;
  size_t max_concurrent_runs = 0;                      // 0: one per compute thread
  std::chrono::milliseconds request_deadline{60'000};  // waiting for a busy method or worker
  // One execute, checked between instructions; a session that ends stops its executes.
  std::chrono::milliseconds execution_deadline{60'000};
  uint64_t max_instructions = 100'000'000;  // per execute, jumps included
  // --vet: programs from clients that the daemon has not seen are first loaded and run
  // in a sandboxed child (server/vetting.h); `vet_binary` is the daemon's own binary.
  bool vet = true;
  std::string vet_binary;
  // Per client: sessions from one TCP host (the Unix socket admits one uid, whose
  // sessions max_sessions bounds), and what one session may hold or run at once.
  size_t max_sessions_per_peer = 64;
  size_t max_programs_per_session = 1024;
  uint64_t max_program_bytes_per_session = uint64_t{8} << 30;
  size_t max_methods_per_session = 256;
  size_t max_calls_per_session = 32;
  // Fast-path channels (docs/fast_path.md): each is served by a thread of its own.
  size_t max_fast_channels = 512;
  size_t max_fast_channels_per_session = 64;
  FastChannelTiming fast_path_timing;
  // --idle-exit: the daemon exits after this long with no session (0: never).
  std::chrono::seconds idle_exit{0};
  // --keep-programs-seconds / --keep-programs-bytes: programs stay loaded this long
  // after their last session let them go, within this many bytes (ProgramRegistry::
  // keep_warm): the next process to load one finds it ready.
  std::chrono::seconds keep_programs{300};
  uint64_t keep_programs_bytes = uint64_t{1} << 30;
  bool fast_path = true;  // false: channels are refused and sessions offer none
  // --socket-group: local users the daemon serves besides its own and root (-1: none).
  int64_t socket_group = -1;
};

class ServiceCore {
 public:
  explicit ServiceCore(ServiceLimits limits, std::string fd_socket_path = "");
  ~ServiceCore();

  ProgramRegistry& registry() { return registry_; }
  const std::string& fd_socket_path() const { return fd_socket_path_; }
  // Whether sessions are offered the fast path (docs/fast_path.md).
  bool offers_fast_path() const { return limits_.fast_path && !fd_socket_path_.empty(); }
  static const char* version();
  // Random, new at each start of the daemon (SessionServerMessage.daemon_instance).
  const std::string& instance() const { return instance_; }

  // Sessions. open_session fails with ResourceExhausted at max_sessions (or at
  // max_sessions_per_peer for one TCP host, or one uid other than the daemon's).
  Result<std::shared_ptr<Session>> open_session(const std::string& client_name,
                                                const SessionOwner& owner = {});
  // Ok when `caller` may name the session `token`: a local session only by a caller of
  // its uid. Otherwise the same error as for a token no session has (a token seen by
  // another user is of no use to them, and they cannot tell it from a wrong one).
  Status check_caller(const std::string& token, const SessionOwner& caller) const;
  // Releases everything the session holds; waits for its running calls to finish.
  void close_session(const std::shared_ptr<Session>& session);
  // The session named by `token`; NotFound when none (or it closed).
  Result<std::shared_ptr<Session>> find_session(const std::string& token) const;

  // Segments (from the descriptor socket). Takes ownership of `fd` in every case.
  Result<uint64_t> register_segment(const std::string& token, int fd);
  // Loading "by path": the client opens the file itself and hands over the descriptor,
  // so the daemon reads only what the caller could read. Returns the session's program
  // id. Takes ownership of `fd`.
  Result<uint64_t> load_program_fd(const std::string& token, int fd);
  // Opens a fast-path channel for the session over `memfd` (docs/fast_path.md), served
  // until the session ends or `link` (the client's connection, owned from now on) is
  // shut down; `channel` receives it (for the caller to stop it when the link closes).
  // Takes ownership of both descriptors in every case. ResourceExhausted at
  // max_fast_channels (per session or in all).
  Status open_fast_channel(const std::string& token, int memfd, int link,
                           std::weak_ptr<FastChannel>& channel);
  // The longest a call may take before the daemon answers it (request deadline plus
  // execution deadline): clients bound their waits with it.
  std::chrono::milliseconds call_deadline() const {
    return limits_.request_deadline + limits_.execution_deadline;
  }

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

  // The calls of the protocol (proto/et_serverd.proto documents each).
  Status load_program(const pb::LoadProgramRequest& req, pb::LoadProgramResponse& resp);
  Status list_programs(const pb::ListProgramsRequest& req, pb::ListProgramsResponse& resp);
  Status describe_program(const pb::DescribeProgramRequest& req, pb::DescribeProgramResponse& resp);
  Status unload_program(const pb::UnloadProgramRequest& req);
  // Runs a bundled program's test cases (runtime/bundled_verify.h). Each execute is
  // bounded by the execution limits; all of them together by the request deadline
  // (cases it leaves unrun are reported DeadlineExceeded).
  Status verify_program(const pb::VerifyProgramRequest& req, pb::VerifyProgramResponse& resp);
  Status load_method(const pb::LoadMethodRequest& req, pb::LoadMethodResponse& resp);
  Status drop_method(const pb::DropMethodRequest& req);
  Status set_inputs(const pb::SetInputsRequest& req);
  Status execute(const pb::ExecuteRequest& req, pb::ExecuteResponse& resp);
  Status get_outputs(const pb::GetOutputsRequest& req, pb::GetOutputsResponse& resp);
  Status run(const pb::RunRequest& req, pb::RunResponse& resp);
  // Prefill and decode (runtime/generation.h) on the method, holding it throughout;
  // `write` sends each reply (the tokens chosen since the last one, then the stats),
  // from a thread of its own, and returns false when the caller went away, which stops
  // the generation. Each execute is bounded by the execution limits; a client that
  // leaves 4096 tokens unread for the request deadline is ResourceExhausted; with no
  // context bound known and no max_new_tokens, at most kDefaultMostNewTokens come.
  static constexpr uint32_t kDefaultMostNewTokens = 4096;
  Status generate(const pb::GenerateRequest& req,
                  const std::function<bool(const pb::GenerateResponse&)>& write);
  // NotFound naming the method's attributes when it has no attribute of that name.
  Status get_attribute(const pb::GetAttributeRequest& req, pb::GetAttributeResponse& resp);
  // Profiles the method's executes from now on (InvalidArgument for max_executes above
  // 100000); starting again discards what was recorded.
  Status start_profile(const pb::StartProfileRequest& req);
  // FailedPrecondition when the method is not being profiled.
  Status stop_profile(const pb::StopProfileRequest& req, pb::StopProfileResponse& resp);
  Status drop_segment(const pb::DropSegmentRequest& req);
  // `peer` as gRPC names it: remote peers get the version and uptime only.
  // `admitted` false (a local user the daemon does not serve): as for remote peers.
  // `with_registry`: also the operators and backends it registers (for anyone).
  Status server_status(const std::string& peer, pb::ServerStatusResponse& resp,
                       bool admitted = true, bool with_registry = false) const;

  // ---- Stateless protocols (the KServe services, server/kserve/) ----
  // A method instance of `program` that no session holds (the caller keeps it), loaded
  // with LoadMethod's limits and output buffers. Errors: Method::load's, ResourceExhausted
  // over --max-method-bytes.
  Result<std::shared_ptr<MethodSlot>> load_instance(
      std::shared_ptr<const RegisteredProgram> program, const std::string& method_name);
  // How long one call on an instance spent in each step, in nanoseconds.
  struct CallTimes {
    uint64_t queued_ns = 0;  // waiting for the instance and a worker
    uint64_t input_ns = 0;   // binding the inputs
    uint64_t infer_ns = 0;   // executing
    uint64_t output_ns = 0;  // in `read_outputs`
  };
  // One call on `slot`, as Run makes it: waits for the slot and a worker (the request
  // deadline), binds `inputs` (what they point into must outlive the slot's next
  // call: they are kept in the slot), executes (the execution deadline; `cancelled`
  // stops it), then lets `read_outputs` read the method's outputs, holding both.
  // Unavailable while the daemon shuts down.
  Status run_instance(MethodSlot& slot, std::vector<DecodedInput> inputs,
                      const std::atomic<bool>& cancelled,
                      const std::function<Status(const Method&)>& read_outputs, CallTimes& times);
  // The limits the daemon runs with.
  const ServiceLimits& limits() const { return limits_; }
  // The calls' metrics (transports open a metrics::CallScope on it for each call).
  metrics::Metrics& metrics() { return metrics_; }
  // Open sessions, and fast-path channels (the metrics page).
  size_t session_count() const;
  size_t fast_channel_count() const { return fast_channels_.load(); }

  // Answers one fast-path request for the session `token` (what a channel's thread
  // runs): the same calls, checks and errors as over gRPC.
  uint32_t fast_call(const std::string& token, etserver::FastCall kind,
                     std::span<const uint8_t> request, std::string& reply);

 private:
  uint32_t fast_call_uncounted(const std::string& token, etserver::FastCall kind,
                               std::span<const uint8_t> request, std::string& reply);
  Result<std::shared_ptr<Session>> session_for(const std::string& token) const;
  Result<std::shared_ptr<const RegisteredProgram>> program_for(Session& s, uint64_t id) const;
  Result<std::shared_ptr<MethodSlot>> method_for(Session& s, uint64_t handle) const;
  SegmentLookup segment_lookup(const std::shared_ptr<Session>& s) const;
  // Adds `program` to the session (once); returns its id there.
  Result<uint64_t> attach_program(Session& s, std::shared_ptr<const RegisteredProgram> program,
                                  bool* already_attached = nullptr);
  Status fill_program_info(const RegisteredProgram& p, uint64_t id, pb::ProgramInfo& out) const;
  // Runs `fn` holding the slot's lock and a worker, waiting at most the deadline.
  Status with_method(MethodSlot& slot, const std::function<Status()>& fn);
  int64_t program_context(MethodSlot& slot, const std::atomic<bool>& cancelled) const;
  Status bind_inputs(const std::shared_ptr<Session>& owner, MethodSlot& slot,
                     const google::protobuf::RepeatedPtrField<pb::Value>& inputs, bool copy_inline);
  Status prepare_outputs(MethodSlot& slot);
  // Executes the slot's method (the execution deadline; `cancelled` stops it).
  Status execute_locked(const std::atomic<bool>& cancelled, MethodSlot& slot, uint64_t& micros);
  // Forgets the channels of every session whose threads have ended (their links
  // closed): they count against the limits until then.
  void reap_fast_channels();
  // Counts a call of `s` for its duration; ResourceExhausted at max_calls_per_session.
  class CallCount;
  // Counts a program load of a session for ServerStatus (nothing when `attached`: the
  // session held it already); `existed`: the daemon had it loaded.
  void count_load(bool existed, bool attached);
  // Ok when `more` bytes of programs fit the session's limit. REQUIRES: s.mu held.
  Status program_bytes_fit(const Session& s, uint64_t more) const ET_REQUIRES(s.mu);
  Status collect_outputs(const std::shared_ptr<Session>& s, MethodSlot& slot,
                         const google::protobuf::RepeatedPtrField<pb::OutputPlacement>& placements,
                         google::protobuf::RepeatedPtrField<pb::Value>& out);

  ServiceLimits limits_;
  metrics::Metrics metrics_;
  std::string fd_socket_path_;
  ProgramRegistry registry_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<bool> ready_{false};
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  const std::string instance_;
  std::unique_ptr<Vetter> vetter_;  // --vet

  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<Session>> sessions_ ET_GUARDED_BY(mu_);  // by token
  uint64_t next_session_ ET_GUARDED_BY(mu_) = 1;
  std::chrono::steady_clock::time_point idle_since_ ET_GUARDED_BY(mu_) = started_;

  // Live fast-path channels of all sessions (their threads).
  std::atomic<size_t> fast_channels_{0};

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
