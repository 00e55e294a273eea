#include "etclient/client.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include "connection.h"
#include "fast_path.h"
#include "proto/sha256.h"
#include "wire.h"

namespace etclient {
namespace {

constexpr size_t kInlineProgramBytes = size_t{1} << 20;  // larger programs go through shm

Status cannot_read(const std::string& path) {
  return Status(StatusCode::kNotFound,
                "cannot read " + path + ": " + std::strerror(errno) + " (check the path)");
}

// The SHA-256 of the file at `path`, read in chunks (the file is never whole in memory)
// and its size.
Result<std::pair<std::string, uint64_t>> hash_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return cannot_read(path);
  et::wire::Sha256 hasher;
  std::vector<char> chunk(size_t{1} << 20);
  uint64_t size = 0;
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<size_t>(in.gcount());
    hasher.update({reinterpret_cast<const uint8_t*>(chunk.data()), got});
    size += got;
  }
  if (in.bad()) return cannot_read(path);
  return std::make_pair(hasher.hex_digest(), size);
}

}  // namespace

size_t element_size(DType type) {
  switch (type) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kBool:
      return 1;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
      return 8;
  }
  return 1;
}

const char* dtype_name(DType type) {
  static const char* kNames[] = {"uint8",   "int8",    "int16",   "int32", "int64",
                                 "float16", "float32", "float64", "bool",  "bfloat16"};
  return kNames[static_cast<int>(type)];
}

size_t SharedTensor::numel() const {
  size_t n = 1;
  for (int64_t s : sizes_) n *= static_cast<size_t>(s);
  return n;
}

std::vector<int64_t> SharedTensor::strides() const {
  std::vector<int64_t> strides(sizes_.size(), 1);
  std::vector<uint32_t> order = dim_order_;
  if (order.size() != sizes_.size()) {
    order.resize(sizes_.size());
    for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<uint32_t>(d);
  }
  int64_t stride = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = stride;
    stride *= std::max<int64_t>(1, sizes_[order[i]]);
  }
  return strides;
}

Status SharedTensor::resize(std::vector<int64_t> sizes) {
  size_t numel = 1;
  for (int64_t s : sizes) {
    if (s < 0) return Status(StatusCode::kInvalidArgument, "resize: a negative size");
    if (s > 0 && numel > capacity_ / static_cast<size_t>(s))
      numel = capacity_ + 1;
    else
      numel *= static_cast<size_t>(s);
  }
  if (data_ == nullptr || numel * element_size(dtype_) > capacity_) {
    return Status(StatusCode::kOutOfRange,
                  "resize: " + std::to_string(numel) + " elements do not fit the tensor's " +
                      std::to_string(capacity_) + "-byte slot; allocate a larger one");
  }
  if (sizes.size() != sizes_.size()) dim_order_.clear();
  sizes_ = std::move(sizes);
  return Status();
}

std::vector<int64_t> SharedTensor::byte_strides() const {
  std::vector<int64_t> s = strides();
  for (int64_t& x : s) x *= static_cast<int64_t>(element_size(dtype_));
  return s;
}

// --- Client ---------------------------------------------------------------------

Result<std::shared_ptr<Client>> Client::connect(const Options& options) {
  auto impl =
      ClientImpl::connect(options.socket.empty() ? default_socket() : options.socket, options);
  if (!impl.ok()) return impl.status();
  return std::shared_ptr<Client>(new Client(std::move(impl).value()));
}

Client::~Client() = default;

Result<std::shared_ptr<Program>> Client::load_program(const std::string& path,
                                                      const std::string& data_path) {
  // Files are hashed in chunks, and read whole only if the daemon lacks them (then
  // straight into the shared memory that carries them): a process loading a program
  // the daemon has costs no copy of it.
  auto program = std::make_shared<Program>();
  auto hashed = hash_file(path);
  if (!hashed.ok()) return hashed.status();
  program->program_.path = path;
  program->program_.sha256 = hashed->first;
  if (!data_path.empty()) {
    auto data = hash_file(data_path);
    if (!data.ok()) return data.status();
    if (data->second == 0) {
      return Status(StatusCode::kInvalidArgument, data_path + " is empty: not a .ptd data file");
    }
    program->data_.path = data_path;
    program->data_.sha256 = data->first;
  }
  auto id = retry_once(*impl_, [&](const std::shared_ptr<const Session>& session) {
    program->client_ = impl_;
    return program->id_in(*session);
  });
  if (!id.ok()) return id.status();
  return program;
}

Result<std::shared_ptr<Program>> Client::load_program_bytes(std::span<const uint8_t> bytes,
                                                            std::span<const uint8_t> data) {
  auto program = std::make_shared<Program>();
  program->program_.sha256 = et::wire::sha256_hex(bytes);
  if (!data.empty()) program->data_.sha256 = et::wire::sha256_hex(data);
  if (impl_->reconnects()) {
    program->program_.bytes =
        std::make_shared<const std::vector<uint8_t>>(bytes.begin(), bytes.end());
    if (!data.empty()) {
      program->data_.bytes = std::make_shared<const std::vector<uint8_t>>(data.begin(), data.end());
    }
  }
  auto id = retry_once(*impl_, [&](const std::shared_ptr<const Session>& session) {
    program->client_ = impl_;
    return program->id_in(*session, bytes, data);
  });
  if (!id.ok()) return id.status();
  return program;
}

Result<ServerStatus> Client::server_status() {
  grpc::ClientContext ctx;
  pb::ServerStatusRequest req;
  pb::ServerStatusResponse resp;
  if (Status s = from_grpc(impl_->stub().ServerStatus(&ctx, req, &resp)); !s.ok()) return s;
  ServerStatus out;
  out.version = resp.version();
  out.protocol_version = resp.protocol_version();
  out.uptime_seconds = resp.uptime_seconds();
  out.sessions = resp.sessions();
  out.programs = resp.programs();
  out.method_instances = resp.method_instances();
  out.executes = resp.executes();
  out.program_loads = resp.program_loads();
  out.program_loads_shared = resp.program_loads_shared();
  out.idle_exit_seconds = resp.idle_exit_seconds();
  out.resident_bytes = resp.resident_bytes();
  out.threads = resp.threads();
  return out;
}

Result<Registry> Client::registry() {
  grpc::ClientContext ctx;
  pb::ServerStatusRequest req;
  req.set_with_registry(true);
  pb::ServerStatusResponse resp;
  if (Status s = from_grpc(impl_->stub().ServerStatus(&ctx, req, &resp)); !s.ok()) return s;
  Registry out;
  out.operators.assign(resp.operators().begin(), resp.operators().end());
  out.backends.assign(resp.backends().begin(), resp.backends().end());
  return out;
}

Result<SharedTensor> Client::empty(DType dtype, std::vector<int64_t> sizes) {
  size_t numel = 1;
  for (int64_t s : sizes) {
    if (s < 0) {
      return Status(StatusCode::kInvalidArgument,
                    "empty: size " + std::to_string(s) + " is negative; sizes count elements");
    }
    if (s > 0 && numel > (size_t{1} << 40) / static_cast<size_t>(s)) {
      return Status(StatusCode::kInvalidArgument, "empty: more than 2^40 elements");
    }
    numel *= static_cast<size_t>(s);
  }
  auto slot = retry_once(*impl_, [&](const std::shared_ptr<const Session>&) {
    return impl_->arena().allocate(numel * element_size(dtype));
  });
  if (!slot.ok()) return slot.status();
  return Wire::make_shared_tensor(std::move(slot).value(), dtype, std::move(sizes));
}

// --- Program --------------------------------------------------------------------

namespace {

// The bytes to send for `source`: `have` (the caller's), else what was kept, else the
// file read again into `reread`, which must still hash as it did at load.
// Bytes for a LoadProgram request: inline when small, else in a shared-memory slot
// (held in `held` until the daemon has read it).
struct Staged {
  std::span<const uint8_t> inline_bytes;
  std::optional<pb::SegmentRange> range;
};

Result<Staged> stage(ClientImpl& client, std::span<const uint8_t> bytes,
                     std::vector<std::shared_ptr<void>>& held) {
  if (bytes.size() <= kInlineProgramBytes) return Staged{bytes, std::nullopt};
  auto slot = client.arena().allocate(bytes.size());
  if (!slot.ok()) return slot.status();
  std::memcpy(slot->first.data, bytes.data(), bytes.size());
  pb::SegmentRange range;
  range.set_segment_id(client.arena().wire_id(slot->first.segment));
  range.set_offset(slot->first.offset);
  range.set_length(bytes.size());
  held.push_back(slot->second);
  return Staged{{}, std::move(range)};
}

Status changed_since_loaded(const std::string& path) {
  return Status(StatusCode::kFailedPrecondition,
                path +
                    " changed since it was loaded, so it cannot be sent to the daemon; load it "
                    "again with load_program()");
}

// The file at `path` (whose SHA-256 must still be `sha256`) read straight into the
// request's bytes: into `small` when it goes inline, else into a shared-memory slot.
Result<Staged> stage_file(ClientImpl& client, const std::string& path, const std::string& sha256,
                          std::vector<std::shared_ptr<void>>& held, std::vector<uint8_t>& small) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return cannot_read(path);
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  uint8_t* into = nullptr;
  std::optional<std::pair<Slot, std::shared_ptr<void>>> slot;
  if (size <= kInlineProgramBytes) {
    small.resize(size);
    into = small.data();
  } else {
    auto allocated = client.arena().allocate(size);
    if (!allocated.ok()) return allocated.status();
    slot = std::move(allocated).value();
    into = slot->first.data;
  }
  in.read(reinterpret_cast<char*>(into), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) return changed_since_loaded(path);
  const std::span<const uint8_t> bytes(into, size);
  if (et::wire::sha256_hex(bytes) != sha256) return changed_since_loaded(path);
  if (!slot) return Staged{bytes, std::nullopt};
  pb::SegmentRange range;
  range.set_segment_id(client.arena().wire_id(slot->first.segment));
  range.set_offset(slot->first.offset);
  range.set_length(size);
  held.push_back(slot->second);
  return Staged{{}, std::move(range)};
}

// A program's or data file's bytes for a LoadProgram request: the caller's (`have`),
// the ones kept for reloading, or its file's.
Result<Staged> stage_source(ClientImpl& client, const std::string& path,
                            const std::shared_ptr<const std::vector<uint8_t>>& kept,
                            const std::string& sha256, std::span<const uint8_t> have,
                            std::vector<std::shared_ptr<void>>& held, std::vector<uint8_t>& small) {
  if (!have.empty()) return stage(client, have, held);
  if (kept) return stage(client, *kept, held);
  return stage_file(client, path, sha256, held, small);
}

}  // namespace

Result<uint64_t> Program::id_in(const Session& session, std::span<const uint8_t> have,
                                std::span<const uint8_t> have_data) {
  std::lock_guard<std::mutex> lock(mu_);
  if (id_ != 0 && generation_ == session.generation) return id_;
  pb::LoadProgramRequest req;
  req.set_session(session.token);
  req.set_sha256(program_.sha256);
  req.set_data_sha256(data_.sha256);
  pb::LoadProgramResponse resp;
  grpc::Status s;
  {
    grpc::ClientContext ctx;
    s = client_->stub().LoadProgram(&ctx, req, &resp);
  }
  std::vector<std::shared_ptr<void>> held;  // the bytes' slots, until the daemon has read them
  if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
    // The daemon lacks these bytes: send them (from the caller, what we kept, or the files).
    std::vector<uint8_t> small, small_data;
    auto staged =
        stage_source(*client_, program_.path, program_.bytes, program_.sha256, have, held, small);
    if (!staged.ok()) return staged.status();
    if (staged->range) {
      *req.mutable_segment() = *staged->range;
    } else {
      req.set_program_bytes(staged->inline_bytes.data(), staged->inline_bytes.size());
    }
    if (!data_.sha256.empty()) {
      staged = stage_source(*client_, data_.path, data_.bytes, data_.sha256, have_data, held,
                            small_data);
      if (!staged.ok()) return staged.status();
      if (staged->range) {
        *req.mutable_data_segment() = *staged->range;
      } else {
        req.set_data_bytes(staged->inline_bytes.data(), staged->inline_bytes.size());
      }
    }
    grpc::ClientContext ctx;
    s = client_->stub().LoadProgram(&ctx, req, &resp);
  }
  if (!s.ok()) return from_grpc(s);
  if (methods_.empty()) {
    for (const pb::MethodMeta& m : resp.info().methods()) methods_.push_back(from_proto(m));
    for (const pb::BundledSuite& t : resp.info().bundled_tests()) {
      bundled_tests_.push_back({t.method_name(), t.cases()});
    }
  }
  id_ = resp.program_id();
  generation_ = session.generation;
  return id_;
}

Result<std::pair<uint64_t, MethodMeta>> Program::instantiate(const Session& session,
                                                             const std::string& name) {
  auto id = id_in(session);
  if (!id.ok()) return id.status();
  pb::LoadMethodRequest req;
  req.set_session(session.token);
  req.set_program_id(*id);
  req.set_method_name(name);
  pb::LoadMethodResponse resp;
  grpc::ClientContext ctx;
  if (grpc::Status s = client_->stub().LoadMethod(&ctx, req, &resp); !s.ok()) return from_grpc(s);
  return std::make_pair(resp.method_handle(), from_proto(resp.meta()));
}

Result<std::unique_ptr<Method>> Program::load_method(const std::string& name) {
  struct Loaded {
    uint64_t handle, generation;
    MethodMeta meta;
  };
  auto loaded =
      retry_once(*client_, [&](const std::shared_ptr<const Session>& session) -> Result<Loaded> {
        auto made = instantiate(*session, name);
        if (!made.ok()) return made.status();
        return Loaded{made->first, session->generation, std::move(made->second)};
      });
  if (!loaded.ok()) return loaded.status();
  return std::unique_ptr<Method>(
      new Method(shared_from_this(), loaded->handle, loaded->generation, std::move(loaded->meta)));
}

namespace {

VerifyReport to_report(const pb::VerifyProgramResponse& resp) {
  VerifyReport report;
  report.rtol = resp.rtol();
  report.atol = resp.atol();
  report.passed = resp.passed();
  for (const pb::VerifyCase& c : resp.cases()) {
    VerifyCase& out = report.cases.emplace_back();
    out.method = c.method_name();
    out.case_index = c.case_index();
    out.passed = c.passed();
    out.error = c.error();
    for (const pb::VerifyOutput& o : c.outputs()) {
      out.outputs.push_back({o.index(), o.passed(), o.elements(), o.mismatched(), o.max_abs_error(),
                             o.max_rel_error(), o.problem()});
    }
  }
  return report;
}

}  // namespace

Result<VerifyReport> Program::verify(const VerifyOptions& options) {
  // Safe to repeat: every run uses fresh method instances in the daemon.
  return retry_once(
      *client_, [&](const std::shared_ptr<const Session>& session) -> Result<VerifyReport> {
        auto id = id_in(*session);
        if (!id.ok()) return id.status();
        pb::VerifyProgramRequest req;
        req.set_session(session->token);
        req.set_program_id(*id);
        req.set_method_name(options.method);
        if (options.rtol) req.set_rtol(*options.rtol);
        if (options.atol) req.set_atol(*options.atol);
        pb::VerifyProgramResponse resp;
        grpc::ClientContext ctx;
        if (grpc::Status s = client_->stub().VerifyProgram(&ctx, req, &resp); !s.ok()) {
          return from_grpc(s);
        }
        return to_report(resp);
      });
}

// --- Method ---------------------------------------------------------------------

// Reused by every call of a Method (protobuf keeps a cleared message's memory), and
// the transport they take.
struct MethodCalls {
  std::unique_ptr<FastPath> fast;  // null: over gRPC
  pb::RunRequest run_request;
  pb::RunResponse run_response;
  pb::SetInputsRequest set_request;
  pb::SetInputsResponse set_response;
  pb::ExecuteRequest execute_request;
  pb::ExecuteResponse execute_response;
  pb::GetOutputsRequest outputs_request;
  pb::GetOutputsResponse outputs_response;
  std::vector<std::shared_ptr<void>> held;  // the next call's bound inputs' slots
  std::vector<SharedTensor> scratch;        // stage_scratch()'s buffers, by input
  // Slots of calls the daemon never answered in time (a hung daemon may still read or
  // write them): kept for the Method's life rather than handed out again.
  std::vector<std::shared_ptr<void>> abandoned;
  std::chrono::microseconds deadline{0};  // Method::set_deadline
  std::chrono::milliseconds timeout{0};   // Method::set_timeout
  bool grpc_timed_out = false;            // the last call's gRPC deadline passed
  Method::DeadlineMisses misses;

  // After a failed call: keeps its slots when the daemon may still use them (a fast
  // path that stopped answering; a gRPC call given up at its timeout while the daemon
  // may still be writing its outputs).
  void abandon_if_overdue(const Status& failed, const OutputSlots* outs) {
    if (failed.code() != StatusCode::kDeadlineExceeded) return;
    if (!grpc_timed_out && (!fast || !fast->broken())) return;
    abandoned.insert(abandoned.end(), held.begin(), held.end());
    if (outs) {
      for (const auto& slot : *outs) abandoned.push_back(slot.second);
    }
  }

  // Starts `req` (a Run or SetInputs request) for the method `handle` of the session
  // `token`: `inputs` encoded, the memory they point into kept in `held` until the call
  // has been answered.
  template <typename Req>
  Status begin(Req& req, const std::string& token, uint64_t handle, Arena& arena,
               const MethodMeta& meta, const std::vector<Input>& inputs) {
    req.Clear();
    req.set_session(token);
    req.set_method_handle(handle);
    held.clear();
    return Wire::encode_inputs(arena, meta, inputs, *req.mutable_inputs(), held);
  }

  // Sends `req` over the fast path when there is one and it fits, else with `rpc`.
  template <typename Req, typename Resp, typename Rpc>
  Status send(et::wire::FastCall kind, const Req& req, Resp& resp, Rpc&& rpc) {
    const auto start = std::chrono::steady_clock::now();
    Status sent;
    bool in_daemon = false;
    // A deadline is for a whole call: execute(inputs[, outputs]), one request (Run).
    const bool timed = deadline.count() > 0 && kind == et::wire::FastCall::kRun;
    grpc_timed_out = false;
    if (fast && !fast->broken() && fast->fits(req.ByteSizeLong())) {
      fast->set_deadline(timed ? deadline : std::chrono::microseconds(0));
      fast->set_timeout(timeout);
      sent = fast->call(kind, req, resp);
      in_daemon = fast->last_missed_deadline();
    } else {
      grpc::ClientContext ctx;
      if (timeout.count() > 0) ctx.set_deadline(std::chrono::system_clock::now() + timeout);
      sent = from_grpc(rpc(&ctx, req, &resp));
      grpc_timed_out = timeout.count() > 0 && sent.code() == StatusCode::kDeadlineExceeded;
    }
    if (timed) {
      ++misses.calls;
      if (std::chrono::steady_clock::now() - start > deadline || in_daemon) {
        ++misses.missed;
        misses.in_daemon += in_daemon ? 1 : 0;
      }
    }
    return sent;
  }
};

Method::Method(std::shared_ptr<Program> program, uint64_t handle, uint64_t generation,
               MethodMeta meta)
    : program_(std::move(program)),
      client_(program_->client_),
      handle_(handle),
      generation_(generation),
      meta_(std::move(meta)),
      calls_(std::make_unique<MethodCalls>()) {
  open_fast_path(*client_->session());
}

void Method::open_fast_path(const Session& session) {
  calls_->fast.reset();
  if (!client_->wants_fast_path() || session.fast_path_version != et::wire::kFastPathVersion ||
      session.generation != generation_) {
    return;
  }
  // Refused (a limit) or not answered: this method's calls go over gRPC.
  auto opened = FastPath::open(session.fd_socket, session.token, client_->spin());
  if (opened.ok()) calls_->fast = std::move(opened).value();
}

const char* Method::transport() const {
  return calls_->fast && !calls_->fast->broken() ? "fast" : "grpc";
}

Method::~Method() {
  auto session = client_->session();
  if (session->generation != generation_) return;  // that daemon is gone, and with it the method
  pb::DropMethodRequest req;
  req.set_session(session->token);
  req.set_method_handle(handle_);
  pb::DropMethodResponse resp;
  grpc::ClientContext ctx;
  (void)client_->stub().DropMethod(&ctx, req, &resp);
}

Status Method::current_session(std::shared_ptr<const Session>& session) {
  session = client_->session();
  if (generation_ == session->generation) {
    if (calls_->fast && calls_->fast->broken()) open_fast_path(*session);
    return Status();
  }
  // The daemon restarted since this method was made: make it again in the new one.
  auto made = program_->instantiate(*session, meta_.name);
  if (!made.ok()) return made.status();
  handle_ = made->first;
  generation_ = session->generation;
  held_inputs_.clear();
  open_fast_path(*session);
  const std::string what =
      session->same_daemon
          ? "et-serverd ended this process's session (it heard nothing from this process for "
            "longer than its keepalive deadline, e.g. while the process was stopped or "
            "suspended; et-serverd --keepalive-timeout-ms sets it): method '" +
                meta_.name + "' was re-created in a new session"
          : "et-serverd restarted: method '" + meta_.name + "' was re-created in the new daemon";
  return Status(StatusCode::kAborted,
                what +
                    " and its state (mutable buffers, inputs set earlier) was lost; call again "
                    "(set the inputs again first if you use set_inputs)");
}

template <typename Rpc>
Status Method::call(Rpc&& rpc) {
  std::shared_ptr<const Session> session;
  if (Status s = current_session(session); !s.ok()) return s;
  Status s = rpc(*session);
  if (s.ok() || !session_lost(s) || !client_->reconnects()) return s;
  if (Status r = client_->reconnect(session->generation); !r.ok()) return r;
  return current_session(session);  // re-creates the method: kAborted, or why it could not
}

Status Method::run(const std::vector<Input>& inputs, std::vector<SharedTensor>* into,
                   std::vector<SharedTensor>& results) {
  return call([&](const Session& session) -> Status {
    MethodCalls& c = *calls_;
    pb::RunRequest& req = c.run_request;
    Status encoded = c.begin(req, session.token, handle_, client_->arena(), meta_, inputs);
    if (!encoded.ok()) return encoded;
    OutputSlots outs;
    if (into) {
      Status placed = Wire::place_into(client_->arena(), meta_, *into, *req.mutable_placements());
      if (!placed.ok()) return placed;
    } else {
      auto placed = Wire::place_outputs(client_->arena(), meta_, *req.mutable_placements());
      if (!placed.ok()) return placed.status();
      outs = std::move(placed).value();
    }
    pb::RunResponse& resp = c.run_response;
    resp.Clear();
    Status sent = c.send(et::wire::FastCall::kRun, req, resp,
                         [&](grpc::ClientContext* ctx, const pb::RunRequest& q,
                             pb::RunResponse* r) { return client_->stub().Run(ctx, q, r); });
    if (!sent.ok()) {
      c.abandon_if_overdue(sent, &outs);
      return sent;
    }
    held_inputs_.swap(c.held);  // an unplanned input stays bound to its slot
    if (into) return Wire::decode_into(resp.outputs(), *into);
    auto decoded = Wire::decode_outputs(client_->arena(), resp.outputs(), outs);
    if (!decoded.ok()) return decoded.status();
    results = std::move(decoded).value();
    return Status();
  });
}

void Method::set_timeout(std::chrono::milliseconds timeout) {
  calls_->timeout = std::max(timeout, std::chrono::milliseconds(0));
}

void Method::set_deadline(std::chrono::microseconds deadline) {
  calls_->deadline = std::max(deadline, std::chrono::microseconds(0));
}

Method::DeadlineMisses Method::deadline_misses() const { return calls_->misses; }

Result<std::vector<SharedTensor>> Method::execute(const std::vector<Input>& inputs) {
  std::vector<SharedTensor> results;
  if (Status s = run(inputs, nullptr, results); !s.ok()) return s;
  return results;
}

Status Method::execute(const std::vector<Input>& inputs, std::vector<SharedTensor>& outputs) {
  std::vector<SharedTensor> unused;
  return run(inputs, &outputs, unused);
}

Result<std::vector<SharedTensor>> Method::output_buffers() {
  std::vector<SharedTensor> buffers;
  for (const ValueMeta& o : meta_.outputs) {
    const uint64_t nbytes = o.tensor ? o.tensor->nbytes : sizeof(int64_t);
    auto slot = retry_once(*client_, [&](const std::shared_ptr<const Session>&) {
      return client_->arena().allocate(nbytes);
    });
    if (!slot.ok()) return slot.status();
    SharedTensor t = Wire::make_shared_tensor(std::move(slot).value(),
                                              o.tensor ? o.tensor->dtype : DType::kInt64,
                                              o.tensor ? o.tensor->sizes : std::vector<int64_t>{});
    if (o.tensor) Wire::set_dim_order(t, o.tensor->dim_order);
    buffers.push_back(std::move(t));
  }
  return buffers;
}

Status Method::set_inputs(const std::vector<Input>& inputs) {
  return call([&](const Session& session) -> Status {
    MethodCalls& c = *calls_;
    pb::SetInputsRequest& req = c.set_request;
    Status encoded = c.begin(req, session.token, handle_, client_->arena(), meta_, inputs);
    if (!encoded.ok()) return encoded;
    Status sent =
        c.send(et::wire::FastCall::kSetInputs, req, c.set_response,
               [&](grpc::ClientContext* ctx, const pb::SetInputsRequest& q,
                   pb::SetInputsResponse* r) { return client_->stub().SetInputs(ctx, q, r); });
    if (!sent.ok()) {
      c.abandon_if_overdue(sent, nullptr);
      return sent;
    }
    held_inputs_.swap(c.held);
    return Status();
  });
}

Status Method::execute() {
  return call([&](const Session& session) -> Status {
    MethodCalls& c = *calls_;
    c.execute_request.set_session(session.token);
    c.execute_request.set_method_handle(handle_);
    return c.send(et::wire::FastCall::kExecute, c.execute_request, c.execute_response,
                  [&](grpc::ClientContext* ctx, const pb::ExecuteRequest& q,
                      pb::ExecuteResponse* r) { return client_->stub().Execute(ctx, q, r); });
  });
}

Result<SharedTensor> Method::empty_input(size_t index) {
  if (index >= meta_.inputs.size() || !meta_.inputs[index].tensor) {
    return Status(StatusCode::kInvalidArgument,
                  "empty_input: method '" + meta_.name + "' has no tensor input " +
                      std::to_string(index) + " (it has " + std::to_string(meta_.inputs.size()) +
                      " inputs; see meta().inputs)");
  }
  const TensorMeta& t = *meta_.inputs[index].tensor;
  auto slot = retry_once(*client_, [&](const std::shared_ptr<const Session>&) {
    return client_->arena().allocate(t.nbytes);
  });
  if (!slot.ok()) return slot.status();
  SharedTensor tensor = Wire::make_shared_tensor(std::move(slot).value(), t.dtype, t.sizes);
  Wire::set_dim_order(tensor, t.dim_order);
  return tensor;
}

Result<SharedTensor> Method::stage_input(size_t index, const HostTensor& host) {
  return retry_once(*client_, [&](const std::shared_ptr<const Session>&) {
    return Wire::copy_host(client_->arena(), meta_, index, host);
  });
}

Result<SharedTensor> Method::stage_scratch(size_t index, const HostTensor& host) {
  if (calls_->scratch.size() <= index) calls_->scratch.resize(index + 1);
  return retry_once(*client_, [&](const std::shared_ptr<const Session>&) {
    return Wire::copy_host(client_->arena(), meta_, index, host, &calls_->scratch[index]);
  });
}

Result<std::vector<SharedTensor>> Method::outputs() {
  std::vector<SharedTensor> results;
  Status s = call([&](const Session& session) -> Status {
    MethodCalls& c = *calls_;
    pb::GetOutputsRequest& req = c.outputs_request;
    req.Clear();
    req.set_session(session.token);
    req.set_method_handle(handle_);
    auto outs = Wire::place_outputs(client_->arena(), meta_, *req.mutable_placements());
    if (!outs.ok()) return outs.status();
    pb::GetOutputsResponse& resp = c.outputs_response;
    resp.Clear();
    Status sent =
        c.send(et::wire::FastCall::kGetOutputs, req, resp,
               [&](grpc::ClientContext* ctx, const pb::GetOutputsRequest& q,
                   pb::GetOutputsResponse* r) { return client_->stub().GetOutputs(ctx, q, r); });
    if (!sent.ok()) return sent;
    auto decoded = Wire::decode_outputs(client_->arena(), resp.outputs(), *outs);
    if (!decoded.ok()) return decoded.status();
    results = std::move(decoded).value();
    return Status();
  });
  if (!s.ok()) return s;
  return results;
}

Status Method::start_profile(uint32_t max_executes) {
  Status s = call([&](const Session& session) -> Status {
    pb::StartProfileRequest req;
    req.set_session(session.token);
    req.set_method_handle(handle_);
    req.set_max_executes(max_executes);
    pb::StartProfileResponse resp;
    grpc::ClientContext ctx;
    return from_grpc(client_->stub().StartProfile(&ctx, req, &resp));
  });
  if (s.ok()) profiled_generation_ = generation_;
  return s;
}

namespace {

Profile to_profile(pb::StopProfileResponse& resp) {
  Profile out;
  out.executes = resp.executes();
  out.dropped = resp.dropped();
  out.execute_ns = resp.execute_ns();
  out.rows.reserve(static_cast<size_t>(resp.rows_size()));
  for (pb::ProfileRow& r : *resp.mutable_rows()) {
    out.rows.push_back({std::move(*r.mutable_kind()), std::move(*r.mutable_name()),
                        std::move(*r.mutable_args()), r.calls(), r.total_ns(), r.min_ns(),
                        r.max_ns()});
  }
  out.table = std::move(*resp.mutable_table());
  out.etdump.assign(resp.etdump().begin(), resp.etdump().end());
  out.chrome_trace = std::move(*resp.mutable_chrome_trace());
  return out;
}

}  // namespace

Result<SharedTensor> Method::attribute(const std::string& name) {
  SharedTensor result;
  Status s = call([&](const Session& session) -> Status {
    pb::GetAttributeRequest req;
    req.set_session(session.token);
    req.set_method_handle(handle_);
    req.set_name(name);
    pb::GetAttributeResponse resp;
    grpc::ClientContext ctx;
    if (Status sent = from_grpc(client_->stub().GetAttribute(&ctx, req, &resp)); !sent.ok()) {
      return sent;
    }
    auto copied = Wire::copy_inline(client_->arena(), resp.value());
    if (!copied.ok()) return copied.status();
    result = std::move(copied).value();
    return Status();
  });
  if (!s.ok()) return s;
  return result;
}

Result<GenerateResult> Method::generate(const GenerateOptions& options,
                                        const std::function<bool(int64_t)>& on_token) {
  GenerateResult result;
  Status s = call([&](const Session& session) -> Status {
    result = GenerateResult{};
    pb::GenerateRequest req;
    req.set_session(session.token);
    req.set_method_handle(handle_);
    for (int64_t t : options.prompt) req.add_prompt(t);
    req.set_start_pos(options.start_pos);
    req.set_max_new_tokens(options.max_new_tokens);
    for (int64_t t : options.stop_tokens) req.add_stop_tokens(t);
    req.set_temperature(options.temperature);
    req.set_top_p(options.top_p);
    req.set_seed(options.seed);
    req.set_max_context(options.max_context);
    grpc::ClientContext ctx;
    auto reader = client_->stub().Generate(&ctx, req);
    pb::GenerateResponse reply;
    bool stopped = false;
    while (reader->Read(&reply)) {
      for (int64_t t : reply.tokens()) {
        if (stopped) break;  // replies already on their way when the caller stopped
        result.tokens.push_back(t);
        if (on_token && !on_token(t)) {
          stopped = true;
          ctx.TryCancel();
        }
      }
      if (reply.done()) {
        result.stop_reason = reply.stop_reason();
        result.prompt_tokens = reply.prompt_tokens();
        result.prefill_micros = reply.prefill_micros();
        result.decode_micros = reply.decode_micros();
        result.next_pos = reply.next_pos();
      }
    }
    const grpc::Status finished = reader->Finish();
    if (stopped) {
      result.stop_reason = "caller";
      result.next_pos = options.start_pos + static_cast<int64_t>(options.prompt.size()) +
                        static_cast<int64_t>(result.tokens.size()) - 1;
      return Status();
    }
    return from_grpc(finished);
  });
  if (!s.ok()) return s;
  return result;
}

Result<Profile> Method::stop_profile(const ProfileOptions& options) {
  const std::optional<uint64_t> started = profiled_generation_;
  const Status lost(StatusCode::kAborted,
                    "et-serverd restarted, or ended this process's session, since "
                    "start_profile(): method '" +
                        meta_.name +
                        "' was re-created in a new session, and the profile was lost with its "
                        "old instance; call start_profile() again");
  Profile profile;
  Status s = call([&](const Session& session) -> Status {
    if (started && *started != generation_) return lost;  // another call re-created it
    pb::StopProfileRequest req;
    req.set_session(session.token);
    req.set_method_handle(handle_);
    req.set_etdump(options.etdump);
    req.set_chrome_trace(options.chrome_trace);
    for (const Method* other : options.merge) {
      if (other == nullptr || other->client_ != client_ || other->generation_ != generation_) {
        return Status(StatusCode::kInvalidArgument,
                      "stop_profile: a method to merge is not of this client's current session");
      }
      req.add_more_method_handles(other->handle_);
    }
    pb::StopProfileResponse resp;
    grpc::ClientContext ctx;
    if (Status sent = from_grpc(client_->stub().StopProfile(&ctx, req, &resp)); !sent.ok()) {
      return sent;
    }
    profile = to_profile(resp);
    return Status();
  });
  // A profile returned, never started or lost in a restart is over; after any other
  // error (a busy method, a daemon that did not answer) it may still be running.
  if (s.ok() || s.code() == StatusCode::kAborted || s.code() == StatusCode::kFailedPrecondition) {
    profiled_generation_.reset();
  }
  if (s.ok()) {
    for (Method* other : options.merge) other->profiled_generation_.reset();
  }
  if (s.code() == StatusCode::kAborted && started) return lost;  // this call re-created it
  if (!s.ok()) return s;
  return profile;
}

}  // namespace etclient
