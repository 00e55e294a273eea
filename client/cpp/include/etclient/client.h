// libetclient: run ExecuTorch programs in et-serverd from a C++ process that never
// loads torch or the runtime.
//
//   auto client = etclient::Client::connect();                // default socket
//   auto program = (*client)->load_program("model.pte");      // hash first, bytes if needed
//   auto method = (*program)->load_method("forward");
//   auto outputs = (*method)->execute({etclient::HostTensor{data, DType::kFloat32, {1, 3}}});
//   const float* y = (*outputs)[0].data_as<float>();          // a view of shared memory
//
// Thread-safety: a Client (and a Program) may be shared by threads; a Method is used by
// one thread at a time (give each thread its own). Outputs are values: any thread.
//
// Daemon restarts: the next call on a Client, Program or Method opens a new session,
// re-registers the shared memory, reloads the program and re-creates the method. A
// Method's first call after that fails with kAborted, saying its state (mutable
// buffers, inputs set earlier, a profile it was taking) was lost; call it again.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "etclient/status.h"

namespace etclient {

enum class DType : uint8_t {
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kBool,
  kBFloat16
};
ETCLIENT_API size_t element_size(DType type);
ETCLIENT_API const char* dtype_name(DType type);

// Puts the calling thread in a real-time class: `policy` is "fifo:PRIORITY" or
// "rr:PRIORITY" (1-99), `cpus` a CPU list ("2", "2-3"; empty: any CPU). Calls on that
// thread then never poll for their answer (a real-time thread that polls keeps
// ordinary threads, perhaps the daemon's, off its CPU): they sleep until the daemon
// wakes them, which preempts any ordinary busy process at once. PermissionDenied
// naming what allows it (RLIMIT_RTPRIO, CAP_SYS_NICE) when not allowed; InvalidArgument
// for text that is not a class or a CPU this process may use. Threads and processes the
// thread starts later keep its CPUs but not its policy (SCHED_RESET_ON_FORK): enter it
// once the client is connected. docs/operations.md, "Real-time class".
ETCLIENT_API Status enter_realtime_class(const std::string& policy, const std::string& cpus = {});

struct TensorMeta {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> sizes;  // upper bounds when dynamic
  std::vector<uint32_t> dim_order;
  uint64_t nbytes = 0;
  bool memory_planned = true;  // false: the daemon reads a shared input in place
  bool dynamic = false;
};

struct ValueMeta {
  std::string kind;  // "tensor", "int", "float", "bool", ...
  std::optional<TensorMeta> tensor;
};

// A tensor the program names (ExecuTorch's attributes): a mutable buffer such as a
// KV cache or a running statistic, or a named constant.
struct AttributeMeta {
  std::string name;
  TensorMeta tensor;
};

struct MethodMeta {
  std::string name;
  std::vector<ValueMeta> inputs, outputs;
  std::vector<std::string> operators, backends;
  std::vector<AttributeMeta> attributes;  // in the program's order
};

// Host memory the caller owns, read during the call that takes it: copied once into
// shared memory, in the layout (dim order) the method declares for that input,
// whatever the strides given.
struct HostTensor {
  const void* data = nullptr;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements, may be negative; empty: row-major
};

class Arena;

// A tensor in the client's shared memory: an input the daemon reads without a copy
// (from Client::empty() or Method::empty_input()), or an output the daemon wrote. A
// scalar output (int, float, bool) is a 0-d int64, float64 or bool tensor; a None
// output is an empty SharedTensor (data() null). Holds its slot until the last
// copy of it is destroyed.
class ETCLIENT_API SharedTensor {
 public:
  SharedTensor() = default;
  void* data() const { return data_; }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  const std::vector<uint32_t>& dim_order() const { return dim_order_; }
  std::vector<int64_t> strides() const;       // in elements
  std::vector<int64_t> byte_strides() const;  // in bytes
  size_t numel() const;
  size_t nbytes() const { return numel() * element_size(dtype_); }
  const char* device() const { return "cpu"; }
  // The same memory (and slot) read as `dtype`, which must have the same width.
  SharedTensor with_dtype(DType dtype) const {
    SharedTensor t = *this;
    if (element_size(dtype) == element_size(dtype_)) t.dtype_ = dtype;
    return t;
  }
  // Gives the tensor new sizes within its slot (e.g. fewer rows of a dynamic input);
  // kOutOfRange if they need more bytes than the slot has.
  Status resize(std::vector<int64_t> sizes);

 private:
  friend struct Wire;
  friend class Client;
  std::shared_ptr<void> slot_;  // frees the slot when the last SharedTensor goes
  void* data_ = nullptr;
  uint32_t segment_ = 0;  // index in the client's arena
  uint64_t offset_ = 0, capacity_ = 0;
  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> sizes_;
  std::vector<uint32_t> dim_order_;
};

using Input = std::variant<HostTensor, SharedTensor, int64_t, double, bool>;

class ClientImpl;
class Program;
struct Session;
struct Wire;         // the implementation's protocol helpers
struct MethodCalls;  // a Method's reusable messages and fast-path channel

// Profiles: Method::start_profile() has the daemon time every execute of that method
// instance, whichever transport carries it, until Method::stop_profile() returns what
// it recorded (as `et-run --profile` does in-process).

// Executes aggregated by operator (with its tensor arguments), by delegate call, or by
// step inside a delegate call.
struct ProfileRow {
  std::string kind;  // "operator", "delegate", or "delegate step" (listed after its call)
  // An operator ("aten::addmm.out"), a backend ("XnnpackBackend"), or what a step runs
  // ("XNNPACK FullyConnected, Add").
  std::string name;
  // An operator's tensor arguments ("float32[4, 16], ..."), a delegate call's "delegate
  // N", a step's first node's debug handle.
  std::string args;
  uint64_t calls = 0;  // over all the profiled executes
  uint64_t total_ns = 0, min_ns = 0, max_ns = 0;
};

// Token generation with a decoder LLM method (Method::generate; docs/llm.md).
struct GenerateOptions {
  std::vector<int64_t> prompt;         // token ids, at least one
  int64_t start_pos = 0;               // the first prompt token's position (0: a new conversation)
  uint32_t max_new_tokens = 0;         // 0: until a stop token or the context is full
  std::vector<int64_t> stop_tokens{};  // e.g. end-of-sequence ids: reported, then it stops
  float temperature = 0;               // 0: greedy
  float top_p = 1;                     // nucleus sampling (1: none)
  uint64_t seed = 0;                   // the same seed gives the same tokens
  int64_t max_context = 0;             // 0: the program's get_max_context_len, if it has one
};
struct GenerateResult {
  std::vector<int64_t> tokens;  // generated, in order (a stop token last, when one came)
  // stop_token, max_new_tokens, context_full; "caller" when on_token returned false.
  std::string stop_reason;
  uint32_t prompt_tokens = 0;
  uint64_t prefill_micros = 0, decode_micros = 0;
  // The last generated token's position (it is not in the cache yet): a follow-up
  // generate() continues with that token as the first of its prompt, here.
  int64_t next_pos = 0;
};

// What Method::stop_profile() returns besides the table and its rows.
class Method;
struct ProfileOptions {
  bool etdump = false;        // Profile::etdump too
  bool chrome_trace = false;  // Profile::chrome_trace too
  // Other methods of the same client, each profiled: their profiles end too and are
  // merged into this one (one table, ETDump and trace; this method's executes first).
  std::vector<Method*> merge{};
};

struct Profile {
  uint64_t executes = 0;         // profiled
  uint64_t dropped = 0;          // run after max_executes were kept: not profiled
  uint64_t execute_ns = 0;       // the profiled executes, end to end
  std::vector<ProfileRow> rows;  // slowest first; a delegate's steps right after it
  std::string table;             // the rows as `et-run --profile` prints them
  // With ProfileOptions::etdump: an ETDump (ExecuTorch's size-prefixed flatbuffer, one
  // run per execute), for executorch.devtools.Inspector(etdump_path=...).
  std::vector<uint8_t> etdump;
  // With ProfileOptions::chrome_trace: Chrome trace JSON, for Perfetto or
  // chrome://tracing (an "X" event of category "execute" per execute).
  std::string chrome_trace;
};

// How calls travel (docs/fast_path.md). kFast: a Method's calls go through a
// shared-memory channel with the daemon (a few microseconds), when the daemon offers
// one, else over gRPC; kGrpc: every call over gRPC.
enum class Transport : uint8_t { kFast, kGrpc };

class ETCLIENT_API Method {
 public:
  ~Method();  // drops the daemon's instance
  const MethodMeta& meta() const { return meta_; }

  // Runs once (one round trip): inputs in order; outputs are fresh shared-memory
  // tensors (a later call never overwrites them). Errors carry the daemon's message
  // naming the input; kAborted once after a daemon restart (see the top).
  Result<std::vector<SharedTensor>> execute(const std::vector<Input>& inputs);

  // The same, writing the results into `outputs`, tensors the caller allocated (from
  // output_buffers() or Client::empty()), one per output: nothing is allocated per
  // call. Each is resized (sizes, dim order) to its result; their memory is rewritten
  // by every call. kInvalidArgument naming the output when one is missing or too small.
  // After kDeadlineExceeded (a daemon that never answered) a daemon that recovers may
  // still write into them.
  Status execute(const std::vector<Input>& inputs, std::vector<SharedTensor>& outputs);
  // One tensor per output, each as large as the output may be: for execute(inputs,
  // outputs). A scalar output gets an 8-byte slot.
  Result<std::vector<SharedTensor>> output_buffers();

  // "fast" when the next call goes through the shared-memory channel, "grpc" when over
  // gRPC (Transport::kGrpc, a daemon without the fast path, or a channel refused).
  const char* transport() const;

  // A deadline for each execute(inputs[, outputs]) of this method (0, the default:
  // none; the three-step form is not timed). A call whose round trip, as this client
  // measures it, takes longer is counted in deadline_misses();
  // over the fast path the daemon also counts each call whose part in the daemon alone
  // took longer (et_serverd_deadline_misses_total{model,method,transport}) and says so
  // in its answer (`in_daemon`). The call still completes: a deadline measures, it does
  // not cancel. Not thread-safe, like every call of a Method.
  void set_deadline(std::chrono::microseconds deadline);
  // A bound on each later call of this method (execute, set_inputs, execute(),
  // get_outputs), over either transport (0, the default: only the daemon's own
  // deadlines): the daemon stops an execute still running at it (kDeadlineExceeded,
  // between two instructions) and never starts a call that waited that long for the
  // method or a worker; the method stays usable. Unlike set_deadline, it ends the call.
  // Over gRPC the client also gives up then. Not thread-safe, like every call of a Method.
  void set_timeout(std::chrono::milliseconds timeout);
  struct DeadlineMisses {
    uint64_t calls = 0;      // calls made with a deadline
    uint64_t missed = 0;     // of those, calls that took longer
    uint64_t in_daemon = 0;  // of the missed, those whose part in the daemon alone did
  };
  DeadlineMisses deadline_misses() const;

  // The same in three steps. Inputs are the caller's until replaced: a SharedTensor
  // given to an unplanned input is read in place by every execute() that follows.
  Status set_inputs(const std::vector<Input>& inputs);
  // A tensor in shared memory shaped and laid out (dtype, sizes, dim order) as input
  // `index` is declared: fill it and pass it for a zero-copy input.
  Result<SharedTensor> empty_input(size_t index);
  // Copies `host` into shared memory now, as input `index` is declared (its layout):
  // for callers whose host memory may change before the call (e.g. under a GIL).
  Result<SharedTensor> stage_input(size_t index, const HostTensor& host);
  // The same into a buffer this method keeps for input `index` and reuses (no
  // allocation once it is large enough): for staging right before a call. A later
  // stage_scratch() of that input rewrites it, so pass it to the next call only.
  Result<SharedTensor> stage_scratch(size_t index, const HostTensor& host);
  Status execute();
  Result<std::vector<SharedTensor>> outputs();  // fresh slots, as above

  // Generates tokens in the daemon: it prefills options.prompt, then decodes, choosing
  // each token from the logits (greedy, or sampled with temperature/top_p/seed), and
  // streams each one back as it comes: `on_token` (if given) receives it and may return
  // false to stop there. The method must be an LLM forward as ExecuTorch's export flow
  // makes it (kInvalidArgument otherwise, saying so); its KV cache stays in this
  // instance, so a follow-up call continues the conversation at result.next_pos.
  Result<GenerateResult> generate(const GenerateOptions& options,
                                  const std::function<bool(int64_t token)>& on_token = {});

  // A copy, in a fresh slot, of the tensor the program names `name` (one of
  // meta().attributes) as this instance holds it now: a mutable buffer's state after
  // the last execute, or a constant. kNotFound naming the attributes there are.
  Result<SharedTensor> attribute(const std::string& name);

  // Has the daemon profile this method's executes from now on, through any transport:
  // every operator, delegate call and step inside a delegate call, timed. It keeps the
  // first `max_executes` (0: 1000; more than 100000 is kInvalidArgument); later ones
  // run unprofiled and are counted as dropped. Starting again discards what was
  // recorded. Like every call, kAborted once after a daemon restart (see the top).
  Status start_profile(uint32_t max_executes = 0);
  // Ends the profile and returns it. kFailedPrecondition when none is running (never
  // started, or stopped already). A profile lives in the daemon's instance of the
  // method: when the daemon restarted (or ended the session) since start_profile(), it
  // is lost, and stop_profile() fails with kAborted (whether or not another call has
  // re-created the method since); start_profile() again. After any other error (e.g.
  // kDeadlineExceeded: the method stayed busy) the profile may still run: call again.
  Result<Profile> stop_profile(const ProfileOptions& options = {});

 private:
  friend class Program;
  Method(std::shared_ptr<Program> program, uint64_t handle, uint64_t generation, MethodMeta meta);
  // Runs rpc(session); after a daemon restart (found now or by another call)
  // reconnects, re-creates the method and returns kAborted instead.
  template <typename Rpc>
  Status call(Rpc&& rpc);
  // Sets `session` to the current one, re-creating the method in it if it is new.
  Status current_session(std::shared_ptr<const Session>& session);
  // Opens the fast-path channel when the transport and the daemon allow it.
  void open_fast_path(const Session& session);
  Status run(const std::vector<Input>& inputs, std::vector<SharedTensor>* into,
             std::vector<SharedTensor>& results);

  std::shared_ptr<Program> program_;
  std::shared_ptr<ClientImpl> client_;
  uint64_t handle_, generation_;
  MethodMeta meta_;
  std::vector<std::shared_ptr<void>> held_inputs_;  // slots bound inputs point into
  std::unique_ptr<MethodCalls> calls_;
  // generation_ when start_profile() last succeeded; unset: no profile to stop.
  std::optional<uint64_t> profiled_generation_;
};

// Bundled programs (.bpte) carry test cases: inputs, and the outputs expected for them.
// Program::verify() has the daemon run them and compare; these describe what it found.

// An element passes when |got - expected| <= atol + rtol * |expected|.
struct VerifyOptions {
  std::optional<double> rtol;  // unset: the daemon's default, 1e-5 (ExecuTorch's)
  std::optional<double> atol;  // unset: 1e-8
  std::string method;          // empty: every tested method; else only its cases
};

// One output of one case, compared with the output the bundle expects.
struct VerifyOutput {
  uint32_t index = 0;
  bool passed = false;
  uint64_t elements = 0;    // compared
  uint64_t mismatched = 0;  // outside the tolerance
  double max_abs_error = 0;
  double max_rel_error = 0;  // over the elements whose expected value is not 0
  std::string problem;       // set when kind, dtype or shape differ (then not compared)
};

struct VerifyCase {
  std::string method;
  uint32_t case_index = 0;  // among its method's cases
  bool passed = false;
  // Why the case could not run (the method did not load, an input did not bind, execute
  // failed, the counts differ); `outputs` is then empty.
  std::string error;
  std::vector<VerifyOutput> outputs;
};

struct VerifyReport {
  double rtol = 0, atol = 0;      // the tolerances used
  std::vector<VerifyCase> cases;  // method by method, case by case, in the file's order
  size_t passed = 0;              // cases that passed
  bool all_passed() const { return passed == cases.size(); }
};

// A tested method of a bundled program and how many test cases it carries.
struct BundledSuite {
  std::string method;
  uint32_t cases = 0;
};

class ETCLIENT_API Program : public std::enable_shared_from_this<Program> {
 public:
  const std::string& sha256() const { return program_.sha256; }
  // Of its external data file (.ptd); empty without one.
  const std::string& data_sha256() const { return data_.sha256; }
  const std::vector<MethodMeta>& methods() const { return methods_; }
  Result<std::unique_ptr<Method>> load_method(const std::string& name = "forward");

  // A bundled program's test suites, in the file's order; empty for a plain .pte.
  const std::vector<BundledSuite>& bundled_tests() const { return bundled_tests_; }
  // Runs the bundled test cases in the daemon: each tested method on a fresh instance
  // of its own (the program's Methods are untouched), its cases in order. A case that
  // fails is reported in the VerifyReport, not as an error. Errors: kFailedPrecondition
  // for a program without test cases (a plain .pte); kNotFound when options.method has
  // none (the message names the methods that do); kInvalidArgument for a negative
  // tolerance. After a daemon restart it reloads the program and runs them there.
  // Thread-safe.
  Result<VerifyReport> verify(const VerifyOptions& options = {});

 private:
  friend class Client;
  friend class Method;
  // A new instance of method `name` in `session` (loading the program there first if
  // needed): its handle and meta. What load_method() and a re-created Method send.
  Result<std::pair<uint64_t, MethodMeta>> instantiate(const Session& session,
                                                      const std::string& name);
  // The daemon's id for this program in `session`, loading it there if needed (by
  // hash, then from the files or the bytes kept for that).
  Result<uint64_t> id_in(const Session& session, std::span<const uint8_t> have = {},
                         std::span<const uint8_t> have_data = {});

  // Where a file's bytes come from when the daemon lacks them.
  struct Source {
    std::string path;                                   // loaded from a file, or
    std::shared_ptr<const std::vector<uint8_t>> bytes;  // kept to reload after a restart
    std::string sha256;
  };
  std::shared_ptr<ClientImpl> client_;
  Source program_;
  Source data_;  // the external data file (.ptd); sha256 empty without one
  std::vector<MethodMeta> methods_;
  std::vector<BundledSuite> bundled_tests_;  // set with methods_, at the first load
  std::mutex mu_;
  uint64_t id_ = 0, generation_ = 0;  // GUARDED_BY(mu_)
};

// What the daemon says of itself (Client::server_status()).
struct ServerStatus {
  std::string version;            // et-serverd's release
  uint32_t protocol_version = 0;  // the client/daemon protocol it speaks
  uint64_t uptime_seconds = 0;
  uint64_t sessions = 0;              // open now
  uint64_t programs = 0;              // distinct programs loaded now
  uint64_t method_instances = 0;      // loaded now
  uint64_t executes = 0;              // since it started
  uint64_t program_loads = 0;         // programs loaded into sessions since it started
  uint64_t program_loads_shared = 0;  // of those, ones it had loaded already
  uint64_t idle_exit_seconds = 0;     // 0: it does not exit when idle
  uint64_t resident_bytes = 0;
  uint32_t threads = 0;
};

// What a daemon can run (Client::registry()).
struct Registry {
  std::vector<std::string> operators;  // "aten::add.out", sorted
  std::vector<std::string> backends;   // delegate ids, e.g. "XnnpackBackend"
};

// Every member has a default, so designated initializers may name only some of them.
struct ClientOptions {
  std::string socket{};  // empty: $ETSERVER_SOCKET, $XDG_RUNTIME_DIR/et-serverd.sock, /tmp/...
  std::string client_name{};
  // How long a call waits for a restarted daemon before failing with kUnavailable;
  // zero: never reconnect (and keep no program bytes for it).
  std::chrono::milliseconds reconnect_timeout{5000};
  // kGrpc also when $ETSERVER_TRANSPORT is "grpc".
  Transport transport = Transport::kFast;
  // How long a fast-path call polls for its answer before sleeping (a futex); negative:
  // $ETSERVER_SPIN_US, else 50 us.
  std::chrono::microseconds spin{-1};
  // When no daemon answers at connect, start one (`et-serverd --detach --idle-exit`,
  // its log at SOCKET.log; docs/ci.md). Unset: $ETSERVER_SPAWN ("0" turns it off),
  // else on. Many processes connecting at once start one daemon.
  std::optional<bool> spawn{};
  // The et-serverd to start: $ETSERVER_BIN, else this path, else et-serverd on PATH.
  std::string serverd_path{};
  // How long a daemon started this way lives with no session.
  std::chrono::seconds idle_exit{300};
};
class ETCLIENT_API Client {
 public:
  using Options = ClientOptions;

  // Connects and opens a session. Unavailable when no daemon answers.
  static Result<std::shared_ptr<Client>> connect(const Options& options = {});
  ~Client();

  // Loads a program, with `data_path`, the external data file (.ptd) it was exported
  // with, for programs that keep their weights there (empty: none): sends the SHA-256s
  // first and the bytes only when the daemon lacks them (through shared memory when
  // large). A program that needs a .ptd and gets none loads (its metadata can
  // be read); its methods then fail to load with InvalidArgument naming the tensor.
  Result<std::shared_ptr<Program>> load_program(const std::string& path,
                                                const std::string& data_path = {});
  // The bytes (and `data`, the .ptd's bytes, if any) are copied, and kept to reload
  // after a restart unless reconnecting is off; the caller's buffers may go once this
  // returns.
  Result<std::shared_ptr<Program>> load_program_bytes(std::span<const uint8_t> bytes,
                                                      std::span<const uint8_t> data = {});
  // A tensor allocated in shared memory, for zero-copy inputs.
  Result<SharedTensor> empty(DType dtype, std::vector<int64_t> sizes);
  // The daemon's version, uptime and counts (its ServerStatus call).
  Result<ServerStatus> server_status();
  // Every operator and backend the daemon registers.
  Result<Registry> registry();

 private:
  explicit Client(std::shared_ptr<ClientImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<ClientImpl> impl_;
};

}  // namespace etclient
