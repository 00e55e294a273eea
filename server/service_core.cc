#include "server/service_core.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <thread>
#include <utility>

#include "proto/protocol_version.h"
#include "runtime/bundled_verify.h"
#include "runtime/chrome_trace.h"
#include "runtime/etdump.h"
#include "runtime/exceptions.h"
#include "runtime/generation.h"
#include "runtime/printable.h"
#include "runtime/thread_pool.h"
#include "server/metrics/call_scope.h"

namespace et::server {
namespace {

constexpr const char* kVersion = "0.1.0";

std::string random_token() {
  uint8_t bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (uint8_t b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

Status unknown_program(uint64_t id) {
  return not_found(fmt::format("program_id {} is not one of this session's programs", id));
}

// Sessions are capped per TCP host: gRPC names a peer "ipv4:10.0.0.7:53412" or
// "ipv6:[::1]:53412"; the port differs per connection, the host does not. Local peers
// (the Unix socket, 0600: one uid) have no key.
Status no_session_error() {
  return unauthenticated(
      "session: no open session has this token (open one with OpenSession and keep its "
      "stream open)");
}

std::string peer_key(const std::string& peer) {
  if (peer.rfind("ipv4:", 0) != 0 && peer.rfind("ipv6:", 0) != 0) return "";
  const size_t colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

// A file system whose reads may wait on a network or another process: a client could
// hand over a file whose read never returns. Null for local file systems.
const char* blocking_file_system(int fd) {
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0) return nullptr;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x65735546UL:  // FUSE
      return "a FUSE file system";
    case 0x6969UL:  // NFS
      return "NFS";
    case 0xFF534D42UL:  // CIFS
    case 0xFE534D42UL:  // SMB2
    case 0x517BUL:      // SMB
      return "an SMB/CIFS share";
    case 0x01021997UL:  // 9P
      return "a 9P file system";
    case 0x00C36400UL:  // Ceph
      return "CephFS";
    default:
      return nullptr;
  }
}

Status shutting_down_error() {
  return unavailable("the daemon is shutting down; reconnect to its successor");
}

}  // namespace

const char* ServiceCore::version() { return kVersion; }

class ServiceCore::CallCount {
 public:
  static Result<CallCount> start(const ServiceCore& core, Session& s) {
    if (s.calls_running.fetch_add(1) >= core.limits_.max_calls_per_session) {
      --s.calls_running;
      return resource_exhausted(fmt::format(
          "this session has {} calls running or waiting, its limit (--max-calls); wait for "
          "one to finish",
          core.limits_.max_calls_per_session));
    }
    return CallCount(s);
  }
  CallCount(CallCount&& other) noexcept : s_(std::exchange(other.s_, nullptr)) {}
  CallCount(const CallCount&) = delete;
  CallCount& operator=(const CallCount&) = delete;
  CallCount& operator=(CallCount&&) = delete;
  ~CallCount() {
    if (s_) --s_->calls_running;
  }

 private:
  explicit CallCount(Session& s) : s_(&s) {}
  Session* s_;
};

ServiceCore::ServiceCore(ServiceLimits limits, std::string fd_socket_path)
    : limits_(limits), fd_socket_path_(std::move(fd_socket_path)), instance_(random_token()) {
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

ServiceCore::~ServiceCore() {
  std::map<std::string, std::shared_ptr<Session>> left;
  {
    MutexLock lock(mu_);
    left.swap(sessions_);
  }
  for (auto& [token, s] : left) close_session(s);
}

size_t ServiceCore::session_count() const {
  MutexLock lock(mu_);
  return sessions_.size();
}

std::chrono::steady_clock::duration ServiceCore::idle_for() const {
  MutexLock lock(mu_);
  if (!sessions_.empty()) return {};
  return std::chrono::steady_clock::now() - idle_since_;
}

bool ServiceCore::begin_shutdown_if_idle() {
  {
    MutexLock lock(mu_);
    if (!sessions_.empty()) return false;
    shutting_down_ = true;
  }
  registry_.stop_waiting();
  return true;
}

void ServiceCore::restart_idle_clock() {
  MutexLock lock(mu_);
  idle_since_ = std::chrono::steady_clock::now();
}

Result<std::shared_ptr<Session>> ServiceCore::open_session(const std::string& client_name,
                                                           const SessionOwner& owner) {
  auto s = std::make_shared<Session>();
  s->token = random_token();
  s->client_name = client_name;
  s->owner = owner;
  // Users the daemon serves besides its own (--socket-group) are kept apart as TCP hosts
  // are: a session limit each, and programs shared with them only once they sent them.
  s->peer_key = owner.local && owner.uid != getuid() && owner.uid != 0
                    ? fmt::format("uid:{}", owner.uid)
                    : peer_key(client_name);
  {
    MutexLock lock(mu_);
    // Checked under mu_: begin_shutdown_if_idle() must not miss a session opening.
    if (shutting_down_) return shutting_down_error();
    if (sessions_.size() >= limits_.max_sessions) {
      return resource_exhausted(fmt::format(
          "the daemon has {} sessions, its limit (--max-sessions); close one or raise it",
          sessions_.size()));
    }
    if (!s->peer_key.empty()) {
      size_t same_peer = 0;
      for (const auto& [token, other] : sessions_) same_peer += other->peer_key == s->peer_key;
      if (same_peer >= limits_.max_sessions_per_peer) {
        return resource_exhausted(fmt::format(
            "{} has {} sessions, the limit per host or user (--max-sessions-per-peer); close one",
            s->peer_key, same_peer));
      }
    }
    s->number = next_session_++;
    sessions_[s->token] = s;
  }
  spdlog::info("session {} opened ({}){}", s->number,
               client_name.empty() ? "unnamed" : printable(client_name),
               owner.local ? fmt::format(" by uid {} pid {}", owner.uid, owner.pid) : "");
  return s;
}

Status ServiceCore::check_caller(const std::string& token, const SessionOwner& caller) const {
  auto found = find_session(token);
  if (!found.ok()) return Status();  // the call itself says there is no such session
  const SessionOwner& owner = (*found)->owner;
  if (!owner.local || (caller.local && caller.uid == owner.uid)) return Status();
  spdlog::warn("session {}: a call from {} named it; refused (it belongs to uid {})",
               (*found)->number,
               caller.local ? fmt::format("uid {} pid {}", caller.uid, caller.pid)
                            : std::string("a TCP peer"),
               owner.uid);
  return no_session_error();
}

void ServiceCore::close_session(const std::shared_ptr<Session>& s) {
  {
    MutexLock lock(mu_);
    if (sessions_.erase(s->token) != 0 && sessions_.empty()) {
      idle_since_ = std::chrono::steady_clock::now();
    }
  }
  std::map<uint64_t, std::shared_ptr<MethodSlot>> methods;
  std::map<uint64_t, std::shared_ptr<Segment>> segments;
  std::map<uint64_t, std::shared_ptr<const RegisteredProgram>> programs;
  std::vector<std::shared_ptr<FastChannel>> channels;
  s->cancelled = true;  // running executes stop at their next instruction
  {
    MutexLock lock(s->mu);
    if (s->closed) return;
    s->closed = true;
    methods.swap(s->methods);
    segments.swap(s->segments);
    programs.swap(s->programs);
    channels.swap(s->channels);
  }
  // Channels take no new request; one being answered finishes below with its method.
  for (auto& channel : channels) channel->stop();
  // Wait for running calls of the session's methods, then free them.
  for (auto& entry : methods) {
    MethodSlot& slot = *entry.second;
    slot.when_idle([&slot] {
      slot.method.reset();
      slot.inputs.clear();
    });
  }
  for (auto& channel : channels) channel->join();  // each uncounts itself as it ends
  for (auto& [id, program] : programs) registry_.keep_warm(program);
  registry_.forget_asker(s->number);
  spdlog::info(
      "session {} closed: released {} method(s), {} segment(s), {} program(s), {} fast-path "
      "channel(s)",
      s->number, methods.size(), segments.size(), programs.size(), channels.size());
}

Result<std::shared_ptr<Session>> ServiceCore::find_session(const std::string& token) const {
  MutexLock lock(mu_);
  auto it = sessions_.find(token);
  if (it == sessions_.end()) return no_session_error();
  return it->second;
}

Result<std::shared_ptr<Session>> ServiceCore::session_for(const std::string& token) const {
  if (shutting_down_) return shutting_down_error();
  auto found = find_session(token);
  if (found.ok()) metrics::CallScope::note_session((*found)->number);
  return found;
}

Result<uint64_t> ServiceCore::register_segment(const std::string& token, int fd) {
  auto found = session_for(token);
  if (!found.ok()) {
    close(fd);
    return found.status();
  }
  Session& s = **found;
  const uint64_t limit = limits_.max_segment_bytes_per_session;
  const uint64_t mapped = *s.mapped_bytes;
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Segment> segment,
                      Segment::adopt(fd, mapped < limit ? limit - mapped : 0));
  MutexLock lock(s.mu);
  if (s.closed) return not_found("session: closed while registering the segment");
  if (s.segments.size() >= limits_.max_segments_per_session) {
    return resource_exhausted(fmt::format(
        "segment: this session has {} segments, its limit (--max-segments); drop one or raise it",
        s.segments.size()));
  }
  if (segment->size() > limit - std::min<uint64_t>(limit, *s.mapped_bytes)) {
    return resource_exhausted(
        fmt::format("segment: {} bytes would put this session over its limit of {} mapped bytes "
                    "(--max-segment-bytes; a dropped segment counts until no input is bound to it)",
                    segment->size(), limit));
  }
  segment->charge_to(s.mapped_bytes);
  const uint64_t id = s.next_id++;
  s.segments[id] = std::move(segment);
  return id;
}

Result<uint64_t> ServiceCore::attach_program(Session& s,
                                             std::shared_ptr<const RegisteredProgram> program,
                                             bool* already_attached) {
  MutexLock lock(s.mu);
  if (s.closed) return not_found("session: closed");
  for (const auto& [pid, held] : s.programs) {
    if (held == program) {
      if (already_attached) *already_attached = true;
      return pid;
    }
  }
  if (s.programs.size() >= limits_.max_programs_per_session) {
    return resource_exhausted(fmt::format(
        "this session holds {} programs, its limit (--max-programs); unload one or raise it",
        s.programs.size()));
  }
  ET_RETURN_IF_ERROR(program_bytes_fit(s, program->size_bytes + program->data_size_bytes));
  s.program_bytes += program->size_bytes + program->data_size_bytes;
  const uint64_t id = s.next_id++;
  s.programs[id] = std::move(program);
  return id;
}

Status ServiceCore::program_bytes_fit(const Session& s, uint64_t more) const {
  const uint64_t limit = limits_.max_program_bytes_per_session;
  if (more <= limit && s.program_bytes <= limit - more) return Status();
  return resource_exhausted(
      fmt::format("this session holds {} bytes of programs; {} more would pass its limit of {} "
                  "(--max-program-bytes-per-session); unload one or raise it",
                  s.program_bytes, more, limit));
}

Result<uint64_t> ServiceCore::load_program_fd(const std::string& token, int fd) {
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return invalid_argument("program file: the descriptor is not a regular file");
  }
  if (const char* kind = blocking_file_system(fd)) {
    return invalid_argument(fmt::format(
        "program file: it is on {}, whose reads can block the daemon indefinitely; copy it to "
        "a local disk, or send its bytes (LoadProgram program_bytes or a segment)",
        kind));
  }
  if (static_cast<uint64_t>(st.st_size) > limits_.max_program_bytes) {
    return resource_exhausted(fmt::format("program file: {} bytes is over the limit of {}",
                                          st.st_size, limits_.max_program_bytes));
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
    if (n <= 0) return io_error("program file: read failed or the file shrank");
    got += static_cast<size_t>(n);
  }
  auto added = registry_.add(bytes, "", {}, {}, s->peer_key);
  if (!added.ok()) return added.status().with_context("program file");
  if (!added->second) {
    spdlog::info("program {} loaded ({} bytes, from a file) by session {}",
                 added->first->sha256.substr(0, 12), added->first->size_bytes, s->number);
  }
  bool attached = false;
  ET_ASSIGN_OR_RETURN(uint64_t id, attach_program(*s, added->first, &attached));
  count_load(added->second, attached);
  return id;
}

SegmentLookup ServiceCore::segment_lookup(const std::shared_ptr<Session>& s) const {
  return [s](uint64_t id) -> Result<std::shared_ptr<Segment>> {
    MutexLock lock(s->mu);
    auto it = s->segments.find(id);
    if (it == s->segments.end()) {
      return not_found(fmt::format("segment_id {} is not one of this session's segments", id));
    }
    return it->second;
  };
}

Status ServiceCore::fill_program_info(const RegisteredProgram& p, uint64_t id,
                                      pb::ProgramInfo& out) const {
  out.set_program_id(id);
  out.set_sha256(p.sha256);
  out.set_size_bytes(p.size_bytes);
  out.set_data_sha256(p.data_sha256);
  out.set_data_size_bytes(p.data_size_bytes);
  out.set_name(p.name);
  for (const std::string& name : p.program->method_names()) {
    ET_ASSIGN_OR_RETURN(const MethodMeta* meta, p.program->method_meta(name));
    to_proto(*meta, *out.add_methods());
  }
  if (const auto& tests = p.program->bundled_tests()) {
    for (const BundledMethodSuite& suite : tests->suites) {
      pb::BundledSuite& entry = *out.add_bundled_tests();
      entry.set_method_name(suite.method);
      entry.set_cases(static_cast<uint32_t>(suite.cases.size()));
    }
  }
  return Status();
}

Status ServiceCore::load_program(const pb::LoadProgramRequest& req, pb::LoadProgramResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  std::shared_ptr<const RegisteredProgram> program;
  bool existed = true;
  switch (req.source_case()) {
    case pb::LoadProgramRequest::SOURCE_NOT_SET:
      if (req.sha256().empty()) {
        return invalid_argument("sha256: give the program's hash, its bytes, or a preloaded name");
      }
      if (req.data_source_case() != pb::LoadProgramRequest::DATA_SOURCE_NOT_SET) {
        return invalid_argument(
            "data_bytes/data_segment: send the program's bytes with its data file's (or "
            "neither, to load a pair the daemon has by their hashes)");
      }
      // Sessions asking for one program at once: the first is told to send it, the
      // others wait for that upload instead of all sending the bytes.
      // (A busy machine can take seconds to start the sender; a sender that closes its
      // session lets the others go at once.)
      program = registry_.find_or_await_upload(req.sha256(), req.data_sha256(), s->number,
                                               s->peer_key, std::chrono::milliseconds(10'000));
      // A program another host uploaded is not found by its hash alone: a remote
      // client learns nothing of other tenants' models and sends the bytes once.
      if (program && program->name.empty() && !program->uploaded_by(s->peer_key)) {
        program = nullptr;
      }
      if (!program) {
        return not_found(fmt::format(
            "sha256: the daemon has no program {}{}; send its bytes (program_bytes or segment{})",
            req.sha256(), req.data_sha256().empty() ? "" : " with data file " + req.data_sha256(),
            req.data_sha256().empty() ? "" : ", and data_bytes or data_segment"));
      }
      break;
    case pb::LoadProgramRequest::kPreloadedName:
      // While the model repository loads at start, the name may be on its way.
      program = registry_.find_preloaded(req.preloaded_name(), limits_.request_deadline);
      if (!program) {
        return not_found(
            fmt::format("preloaded_name: no preloaded program '{}' (ListPrograms "
                        "names them)",
                        printable(req.preloaded_name())));
      }
      break;
    case pb::LoadProgramRequest::kProgramBytes:
    case pb::LoadProgramRequest::kSegment: {
      // However this upload ends (refused by a limit, say), sessions waiting for it
      // stop waiting (a successful add() has let them go already).
      struct Release {
        ProgramRegistry& registry;
        const pb::LoadProgramRequest& req;
        uint64_t session;
        ~Release() { registry.release_claim(req.sha256(), req.data_sha256(), session); }
      } release{registry_, req, s->number};
      std::span<const uint8_t> bytes;
      std::shared_ptr<Segment> segment;
      if (req.source_case() == pb::LoadProgramRequest::kProgramBytes) {
        bytes = {reinterpret_cast<const uint8_t*>(req.program_bytes().data()),
                 req.program_bytes().size()};
      } else {
        auto found = segment_lookup(s)(req.segment().segment_id());
        if (!found.ok()) return found.status().with_context("segment");
        segment = *found;
        auto range = segment->range(req.segment().offset(), req.segment().length());
        if (!range.ok()) return range.status().with_context("segment");
        bytes = *range;
      }
      std::span<const uint8_t> data;
      std::shared_ptr<Segment> data_segment;
      if (req.data_source_case() == pb::LoadProgramRequest::kDataBytes) {
        data = {reinterpret_cast<const uint8_t*>(req.data_bytes().data()), req.data_bytes().size()};
        if (data.empty()) return invalid_argument("data_bytes: the data file is empty");
      } else if (req.data_source_case() == pb::LoadProgramRequest::kDataSegment) {
        auto found = segment_lookup(s)(req.data_segment().segment_id());
        if (!found.ok()) return found.status().with_context("data_segment");
        data_segment = *found;
        auto range = data_segment->range(req.data_segment().offset(), req.data_segment().length());
        if (!range.ok()) return range.status().with_context("data_segment");
        data = *range;
        if (data.empty()) return invalid_argument("data_segment: the range is empty");
      }
      const uint64_t total = uint64_t{bytes.size()} + data.size();
      {
        // Refused before the bytes are copied and verified, not after.
        MutexLock lock(s->mu);
        ET_RETURN_IF_ERROR(program_bytes_fit(*s, total));
      }
      if (total > limits_.max_program_bytes) {
        return resource_exhausted(fmt::format(
            "program: {} bytes{} is over the limit of {} "
            "(--max-program-bytes)",
            total, data.empty() ? "" : " with its data file", limits_.max_program_bytes));
      }
      auto added = registry_.add(bytes, req.sha256(), data, req.data_sha256(), s->peer_key);
      if (!added.ok()) return added.status().with_context("program");
      program = added->first;
      existed = added->second;
      if (!existed) {
        spdlog::info("program {} loaded ({} bytes{}) by session {}", program->sha256.substr(0, 12),
                     program->size_bytes,
                     program->data_sha256.empty() ? std::string()
                                                  : fmt::format(", data file {} of {} bytes",
                                                                program->data_sha256.substr(0, 12),
                                                                program->data_size_bytes),
                     s->number);
      }
      break;
    }
  }
  bool attached = false;
  ET_ASSIGN_OR_RETURN(uint64_t id, attach_program(*s, program, &attached));
  count_load(existed, attached);
  resp.set_program_id(id);
  resp.set_sha256(program->sha256);
  resp.set_already_loaded(existed || attached);
  return fill_program_info(*program, id, *resp.mutable_info());
}

Status ServiceCore::list_programs(const pb::ListProgramsRequest& req,
                                  pb::ListProgramsResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  std::map<uint64_t, std::shared_ptr<const RegisteredProgram>> programs;
  {
    MutexLock lock(s->mu);
    programs = s->programs;
  }
  for (const auto& [id, p] : programs)
    ET_RETURN_IF_ERROR(fill_program_info(*p, id, *resp.add_loaded()));
  for (const std::string& name : registry_.preloaded_names()) resp.add_preloaded_names(name);
  return Status();
}

Status ServiceCore::describe_program(const pb::DescribeProgramRequest& req,
                                     pb::DescribeProgramResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const RegisteredProgram> p,
                      program_for(*s, req.program_id()));
  return fill_program_info(*p, req.program_id(), *resp.mutable_info());
}

Status ServiceCore::verify_program(const pb::VerifyProgramRequest& req,
                                   pb::VerifyProgramResponse& resp) {
  const auto arrived = std::chrono::steady_clock::now();
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const RegisteredProgram> p,
                      program_for(*s, req.program_id()));
  VerifyOptions options;
  if (req.has_rtol()) options.tolerance.rtol = req.rtol();
  if (req.has_atol()) options.tolerance.atol = req.atol();
  options.method = req.method_name();
  options.method_options.max_planned_bytes = limits_.max_method_bytes;
  options.limits.deadline = arrived + limits_.request_deadline;
  options.limits.cancelled = &s->cancelled;
  options.limits.max_instructions = limits_.max_instructions;
  ET_ASSIGN_OR_RETURN(VerifyReport report, verify_bundled(p->program, options));
  resp.set_rtol(report.tolerance.rtol);
  resp.set_atol(report.tolerance.atol);
  resp.set_passed(static_cast<uint32_t>(report.num_passed()));
  for (const CaseResult& c : report.cases) {
    pb::VerifyCase& out = *resp.add_cases();
    out.set_method_name(c.method);
    out.set_case_index(static_cast<uint32_t>(c.case_index));
    out.set_passed(c.passed());
    if (!c.status.ok()) out.set_error(c.status.to_string());
    for (const OutputCheck& o : c.outputs) {
      pb::VerifyOutput& check = *out.add_outputs();
      check.set_index(static_cast<uint32_t>(o.index));
      check.set_passed(o.passed);
      check.set_elements(o.elements);
      check.set_mismatched(o.mismatched);
      check.set_max_abs_error(o.max_abs_error);
      check.set_max_rel_error(o.max_rel_error);
      check.set_problem(o.problem);
    }
  }
  return Status();
}

Status ServiceCore::unload_program(const pb::UnloadProgramRequest& req) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  std::vector<std::shared_ptr<MethodSlot>> dropped;
  std::shared_ptr<const RegisteredProgram> released;
  {
    MutexLock lock(s->mu);
    auto it = s->programs.find(req.program_id());
    if (it == s->programs.end()) return unknown_program(req.program_id());
    for (auto m = s->methods.begin(); m != s->methods.end();) {
      if (m->second->program == it->second) {
        dropped.push_back(m->second);
        m = s->methods.erase(m);
      } else {
        ++m;
      }
    }
    s->program_bytes -= it->second->size_bytes + it->second->data_size_bytes;
    released = std::move(it->second);
    s->programs.erase(it);
  }
  registry_.keep_warm(std::move(released));
  for (auto& slot : dropped) {
    slot->when_idle([&] { slot->method.reset(); });
  }
  return Status();
}

Status ServiceCore::load_method(const pb::LoadMethodRequest& req, pb::LoadMethodResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const RegisteredProgram> p,
                      program_for(*s, req.program_id()));
  const std::string name = req.method_name().empty() ? "forward" : req.method_name();
  auto too_many_methods = [&]() ET_REQUIRES(s->mu) -> Status {
    if (s->methods.size() < limits_.max_methods_per_session) return Status();
    return resource_exhausted(fmt::format(
        "this session holds {} methods, its limit (--max-methods); drop one or raise it",
        s->methods.size()));
  };
  {
    MutexLock lock(s->mu);
    ET_RETURN_IF_ERROR(too_many_methods());
  }
  auto method = Method::load(p->program, name, {.max_planned_bytes = limits_.max_method_bytes});
  if (!method.ok()) return method.status().with_context("method_name");
  auto slot = std::make_shared<MethodSlot>();
  slot->program = p;
  slot->method = std::move(method).value();
  to_proto(slot->method->meta(), *resp.mutable_meta());
  ET_RETURN_IF_ERROR(prepare_outputs(*slot));
  MutexLock lock(s->mu);
  if (s->closed) return not_found("session: closed");
  ET_RETURN_IF_ERROR(too_many_methods());
  const uint64_t handle = s->next_id++;
  s->methods[handle] = std::move(slot);
  resp.set_method_handle(handle);
  return Status();
}

Result<std::shared_ptr<MethodSlot>> ServiceCore::load_instance(
    std::shared_ptr<const RegisteredProgram> program, const std::string& method_name) {
  auto method =
      Method::load(program->program, method_name, {.max_planned_bytes = limits_.max_method_bytes});
  if (!method.ok()) return method.status();
  auto slot = std::make_shared<MethodSlot>();
  slot->program = std::move(program);
  slot->method = std::move(method).value();
  ET_RETURN_IF_ERROR(prepare_outputs(*slot));
  return slot;
}

Status ServiceCore::run_instance(MethodSlot& slot, std::vector<DecodedInput> inputs,
                                 const std::atomic<bool>& cancelled,
                                 const std::function<Status(const Method&)>& read_outputs,
                                 CallTimes& times) {
  using Clock = std::chrono::steady_clock;
  auto ns_since = [](Clock::time_point t) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
  };
  if (shutting_down_) return shutting_down_error();
  const auto asked = Clock::now();
  return with_method(slot, [&]() -> Status {
    times.queued_ns = ns_since(asked);
    auto step = Clock::now();
    Method& m = *slot.method;
    std::vector<InputValue> values;
    values.reserve(inputs.size());
    for (const DecodedInput& d : inputs) values.push_back(d.value);
    Status st = m.set_inputs(values);
    slot.inputs = std::move(inputs);  // what the bound inputs point into stays alive
    times.input_ns = ns_since(step);
    if (!st.ok()) return st;
    uint64_t micros = 0;
    st = execute_locked(cancelled, slot, micros);
    times.infer_ns = micros * 1000;
    if (!st.ok()) return st;
    step = Clock::now();
    st = read_outputs(m);
    times.output_ns = ns_since(step);
    return st;
  });
}

Status ServiceCore::prepare_outputs(MethodSlot& slot) {
  // Unplanned outputs get daemon memory; results are copied out of it on return. The
  // program states their sizes, so they count, with the planned memory, against the
  // method's limit before anything is allocated.
  Method& m = *slot.method;
  uint64_t total = m.planned_bytes();
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const ValueMeta& o = m.meta().outputs[i];
    if (o.tensor && !o.tensor->is_memory_planned && !m.output_is_input(i) &&
        __builtin_add_overflow(total, o.tensor->nbytes, &total)) {
      total = UINT64_MAX;
    }
  }
  if (total > limits_.max_method_bytes) {
    return resource_exhausted(fmt::format(
        "method '{}' needs {} bytes of planned memory and output buffers, over the limit of {} "
        "per method (--max-method-bytes)",
        m.meta().name, total, limits_.max_method_bytes));
  }
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    slot.output_buffers.emplace_back(nullptr, &std::free);
    const ValueMeta& o = m.meta().outputs[i];
    if (o.tensor && !o.tensor->is_memory_planned && !m.output_is_input(i)) {
      const size_t nbytes = std::max<size_t>(o.tensor->nbytes, 1);
      slot.output_buffers[i].reset(static_cast<uint8_t*>(std::calloc(nbytes, 1)));
      if (!slot.output_buffers[i]) {
        return resource_exhausted(fmt::format("cannot allocate {} bytes for output {}", nbytes, i));
      }
      ET_RETURN_IF_ERROR(m.set_output_buffer(i, slot.output_buffers[i].get(), nbytes));
    }
  }
  return Status();
}

Status ServiceCore::drop_method(const pb::DropMethodRequest& req) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  std::shared_ptr<MethodSlot> slot;
  {
    MutexLock lock(s->mu);
    auto it = s->methods.find(req.method_handle());
    if (it == s->methods.end()) {
      return not_found(fmt::format("method_handle {} is not one of this session's methods",
                                   req.method_handle()));
    }
    slot = it->second;
    s->methods.erase(it);
  }
  slot->when_idle([&] {
    slot->method.reset();
    slot->inputs.clear();
  });
  return Status();
}

Result<std::shared_ptr<const RegisteredProgram>> ServiceCore::program_for(Session& s,
                                                                          uint64_t id) const {
  MutexLock lock(s.mu);
  auto it = s.programs.find(id);
  if (it == s.programs.end()) return unknown_program(id);
  return it->second;
}

Result<std::shared_ptr<MethodSlot>> ServiceCore::method_for(Session& s, uint64_t handle) const {
  MutexLock lock(s.mu);
  auto it = s.methods.find(handle);
  if (it == s.methods.end()) {
    return not_found(fmt::format("method_handle {} is not one of this session's methods", handle));
  }
  return it->second;
}

Status ServiceCore::with_method(MethodSlot& slot, const std::function<Status()>& fn) {
  const auto arrived = std::chrono::steady_clock::now();
  const auto deadline = arrived + limits_.request_deadline;
  {
    MutexLock lock(slot.mu);
    if (!lock.wait_until(slot.freed, deadline, [&]() ET_REQUIRES(slot.mu) { return !slot.busy; })) {
      return deadline_exceeded(
          "deadline: the method stayed busy with another call past the request deadline");
    }
    if (!slot.method) return not_found("method_handle: the method was dropped");
    slot.busy = true;
    metrics::CallScope::note_method(slot);
  }
  // Guards, not the happy path, give the slot and the worker back: whatever `fn` does
  // (an error, an exception), the next call finds both free.
  struct SlotHold {
    MethodSlot& slot;
    ~SlotHold() {
      {
        MutexLock lock(slot.mu);
        slot.busy = false;
      }
      slot.freed.notify_all();
    }
  } slot_hold{slot};
  {
    MutexLock workers(run_mu_);
    if (!workers.wait_until(run_cv_, deadline, [&]() ET_REQUIRES(run_mu_) {
          return running_ < limits_.max_concurrent_runs;
        })) {
      return deadline_exceeded("deadline: no worker became free before the request deadline");
    }
    ++running_;
  }
  struct WorkerHold {
    ServiceCore& core;
    ~WorkerHold() {
      {
        MutexLock workers(core.run_mu_);
        --core.running_;
      }
      core.run_cv_.notify_one();
    }
  } worker_hold{*this};
  metrics::CallScope::note_queue(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - arrived)
                                .count()));
  return catch_exceptions("", fn);
}

Status ServiceCore::bind_inputs(const std::shared_ptr<Session>& owner, MethodSlot& slot,
                                const google::protobuf::RepeatedPtrField<pb::Value>& inputs,
                                bool copy_inline) {
  Method& m = *slot.method;
  if (static_cast<size_t>(inputs.size()) != m.num_inputs()) {
    return invalid_argument(
        fmt::format("inputs: {} given, the method takes {}", inputs.size(), m.num_inputs()));
  }
  std::vector<DecodedInput> decoded(m.num_inputs());
  const SegmentLookup lookup = segment_lookup(owner);
  for (size_t i = 0; i < decoded.size(); ++i) {
    // A planned input is copied into the method's memory by set_inputs() below, so the
    // request's bytes need no copy of their own; an unplanned one stays pointed at.
    const std::optional<TensorMeta>& declared = m.meta().inputs[i].tensor;
    const bool planned = declared && declared->is_memory_planned;
    ET_RETURN_IF_ERROR(
        decode_input(i, inputs[static_cast<int>(i)], lookup, copy_inline && !planned, decoded[i]));
  }
  std::vector<InputValue> values;
  for (const DecodedInput& d : decoded) values.push_back(d.value);
  Status status = m.set_inputs(values);
  slot.inputs = std::move(decoded);  // what the bound inputs point into stays alive
  return status.with_context("inputs");
}

void ServiceCore::count_load(bool existed, bool attached) {
  if (attached) return;  // the session had it: not a load
  program_loads_.fetch_add(1, std::memory_order_relaxed);
  if (existed) program_loads_shared_.fetch_add(1, std::memory_order_relaxed);
}

Status ServiceCore::execute_locked(const std::atomic<bool>& cancelled, MethodSlot& slot,
                                   uint64_t& micros) {
  executes_.fetch_add(1, std::memory_order_relaxed);
  const auto start = std::chrono::steady_clock::now();
  ExecuteProfile* profile = nullptr;
  MethodSlot::Profiling* profiling = slot.profiling.get();
  if (profiling != nullptr) {
    if (profiling->executes.size() < profiling->max_executes &&
        profiling->events < MethodSlot::Profiling::kMostEvents) {
      profile = &profiling->executes.emplace_back();
    } else {
      ++profiling->dropped;
    }
  }
  Status status = slot.method->execute(
      {start + limits_.execution_deadline, &cancelled, limits_.max_instructions}, profile);
  if (profile != nullptr) {
    if (profile->start_ns == 0) {
      profiling->executes.pop_back();  // refused before it ran (inputs not set)
    } else {
      profiling->events += profile->events.size();
    }
  }
  const auto took =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  micros = static_cast<uint64_t>(took / 1000);
  metrics::CallScope::note_compute(static_cast<uint64_t>(took));
  return status;
}

Status ServiceCore::collect_outputs(
    const std::shared_ptr<Session>& s, MethodSlot& slot,
    const google::protobuf::RepeatedPtrField<pb::OutputPlacement>& placements,
    google::protobuf::RepeatedPtrField<pb::Value>& out) {
  Method& m = *slot.method;
  if (!placements.empty() && static_cast<size_t>(placements.size()) != m.num_outputs()) {
    return invalid_argument(
        fmt::format("placements: {} given for {} outputs (give none, or one "
                    "per output)",
                    placements.size(), m.num_outputs()));
  }
  const SegmentLookup lookup = segment_lookup(s);
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    ET_ASSIGN_OR_RETURN(const Value* v, m.output(i));
    const pb::OutputPlacement* where =
        placements.empty() ? nullptr : &placements[static_cast<int>(i)];
    ET_RETURN_IF_ERROR(encode_output(i, *v, where, lookup, *out.Add()));
  }
  return Status();
}

Status ServiceCore::start_profile(const pb::StartProfileRequest& req) {
  constexpr uint32_t kDefaultExecutes = 1000, kMostExecutes = 100'000;
  if (req.max_executes() > kMostExecutes) {
    return invalid_argument(fmt::format("max_executes: {} is above the most a profile keeps, {}",
                                        req.max_executes(), kMostExecutes));
  }
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> slot, method_for(*s, req.method_handle()));
  return with_method(*slot, [&] {
    slot->profiling = std::make_unique<MethodSlot::Profiling>();
    slot->profiling->max_executes = req.max_executes() == 0 ? kDefaultExecutes : req.max_executes();
    return Status();
  });
}

Status ServiceCore::stop_profile(const pb::StopProfileRequest& req, pb::StopProfileResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  std::vector<uint64_t> handles{req.method_handle()};
  handles.insert(handles.end(), req.more_method_handles().begin(), req.more_method_handles().end());
  std::vector<std::shared_ptr<MethodSlot>> slots;
  for (uint64_t handle : handles) {
    ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> slot, method_for(*s, handle));
    if (std::find(slots.begin(), slots.end(), slot) != slots.end()) {
      return invalid_argument(fmt::format("method_handle {} is named twice", handle));
    }
    slots.push_back(std::move(slot));
  }
  // An ETDump holds at most 10,000,000 events: a merge that would exceed it takes none.
  if (req.etdump() && slots.size() > 1) {
    uint64_t events = 0;
    for (const auto& slot : slots) {
      ET_RETURN_IF_ERROR(with_method(*slot, [&] {
        if (slot->profiling) events += slot->profiling->events;
        return Status();
      }));
    }
    constexpr uint64_t kMostEtdumpEvents = 10'000'000;
    if (events > kMostEtdumpEvents) {
      return resource_exhausted(fmt::format(
          "the {} profiles hold {} events; one ETDump holds at most {}: stop them separately "
          "or profile fewer executes",
          slots.size(), events, kMostEtdumpEvents));
    }
  }
  // Every profile is taken, or (when one is not running) none.
  std::vector<std::unique_ptr<MethodSlot::Profiling>> taken(slots.size());
  Status st;
  for (size_t i = 0; i < slots.size() && st.ok(); ++i) {
    st = with_method(*slots[i], [&] {
      taken[i] = std::move(slots[i]->profiling);
      return Status();
    });
    if (st.ok() && taken[i] == nullptr) {
      st = failed_precondition(fmt::format(
          "method_handle {} is not being profiled: call StartProfile first", handles[i]));
    }
  }
  if (!st.ok()) {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (taken[i] == nullptr) continue;
      (void)with_method(*slots[i], [&] {
        if (slots[i]->profiling == nullptr) slots[i]->profiling = std::move(taken[i]);
        return Status();
      });
    }
    return st;
  }
  std::unique_ptr<MethodSlot::Profiling> profiling = std::move(taken[0]);
  for (size_t i = 1; i < taken.size(); ++i) {
    for (ExecuteProfile& e : taken[i]->executes) profiling->executes.push_back(std::move(e));
    profiling->dropped += taken[i]->dropped;
  }
  const ProfileSummary summary = ProfileSummary::of(profiling->executes);
  resp.set_executes(summary.executes);
  resp.set_dropped(profiling->dropped);
  resp.set_execute_ns(static_cast<uint64_t>(summary.execute_ns));
  for (const ProfileRow& row : summary.rows) {
    pb::ProfileRow& out = *resp.add_rows();
    out.set_kind(profile_event_kind_name(row.kind));
    out.set_name(row.name);
    out.set_args(row.args);
    out.set_calls(row.calls);
    out.set_total_ns(static_cast<uint64_t>(row.total_ns));
    out.set_min_ns(static_cast<uint64_t>(row.min_ns));
    out.set_max_ns(static_cast<uint64_t>(row.max_ns));
  }
  resp.set_table(summary.table());
  if (req.etdump()) {
    ET_ASSIGN_OR_RETURN(const std::vector<uint8_t> etdump, etdump_bytes(profiling->executes));
    resp.set_etdump(etdump.data(), etdump.size());
  }
  if (req.chrome_trace()) resp.set_chrome_trace(chrome_trace_json(profiling->executes));
  return Status();
}

Status ServiceCore::set_inputs(const pb::SetInputsRequest& req) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> slot, method_for(*s, req.method_handle()));
  return with_method(*slot, [&] { return bind_inputs(s, *slot, req.inputs(), true); });
}

Status ServiceCore::execute(const pb::ExecuteRequest& req, pb::ExecuteResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> slot, method_for(*s, req.method_handle()));
  return with_method(*slot, [&] {
    uint64_t micros = 0;
    Status st = execute_locked(s->cancelled, *slot, micros);
    resp.set_execution_micros(micros);
    return st;
  });
}

Status ServiceCore::get_outputs(const pb::GetOutputsRequest& req, pb::GetOutputsResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> slot, method_for(*s, req.method_handle()));
  return with_method(
      *slot, [&] { return collect_outputs(s, *slot, req.placements(), *resp.mutable_outputs()); });
}

Status ServiceCore::run(const pb::RunRequest& req, pb::RunResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> slot, method_for(*s, req.method_handle()));
  return with_method(*slot, [&]() -> Status {
    // Inline bytes are copied: an unplanned input stays bound to them after this call.
    ET_RETURN_IF_ERROR(bind_inputs(s, *slot, req.inputs(), true));
    uint64_t micros = 0;
    Status st = execute_locked(s->cancelled, *slot, micros);
    resp.set_execution_micros(micros);
    if (st.ok()) st = collect_outputs(s, *slot, req.placements(), *resp.mutable_outputs());
    return st;
  });
}

// runtime/generation.h's program_max_context, with the daemon's limits and the
// session's cancellation, asked once per instance; the caller holds the slot.
int64_t ServiceCore::program_context(MethodSlot& slot, const std::atomic<bool>& cancelled) const {
  if (!slot.context) {
    MethodOptions options;
    options.max_planned_bytes = limits_.max_method_bytes;
    slot.context =
        program_max_context(slot.program->program, options,
                            {std::chrono::steady_clock::now() + limits_.execution_deadline,
                             &cancelled, limits_.max_instructions});
  }
  return *slot.context;
}

namespace {

// The shortest time between two writes of generated tokens to a client (the first
// token is written at once).
constexpr std::chrono::milliseconds kStreamInterval{4};

// Tokens between the generation (which holds the method and a worker) and the thread
// that writes them to the client: a client that stops reading stalls only the writer,
// and the generation stops when too many tokens wait for too long.
struct TokenQueue {
  Mutex mu;
  std::condition_variable changed;
  std::deque<int64_t> tokens ET_GUARDED_BY(mu);
  bool done ET_GUARDED_BY(mu) = false;    // no more tokens come
  bool broken ET_GUARDED_BY(mu) = false;  // a write failed (the client went away)
};

}  // namespace

Status ServiceCore::generate(const pb::GenerateRequest& req,
                             const std::function<bool(const pb::GenerateResponse&)>& write) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> slot, method_for(*s, req.method_handle()));
  constexpr int kMostTokens = 1 << 20;
  if (req.prompt_size() > kMostTokens || req.max_new_tokens() > kMostTokens) {
    return invalid_argument(
        fmt::format("generate: at most {} prompt and {} new tokens", kMostTokens, kMostTokens));
  }
  GenerationOptions o;
  o.prompt.assign(req.prompt().begin(), req.prompt().end());
  o.start_pos = req.start_pos();
  o.max_new_tokens = req.max_new_tokens();
  o.stop_tokens.assign(req.stop_tokens().begin(), req.stop_tokens().end());
  o.temperature = req.temperature();
  o.top_p = req.top_p() == 0 ? 1.0f : req.top_p();
  o.seed = req.seed();

  TokenQueue queue;
  constexpr size_t kMostWaiting = 4096;  // tokens written to no one yet
  std::thread writer([&] {
    MutexLock lock(queue.mu);
    std::chrono::steady_clock::time_point last_write{};
    while (true) {
      lock.wait(queue.changed,
                [&]() ET_REQUIRES(queue.mu) { return queue.done || !queue.tokens.empty(); });
      if (queue.tokens.empty()) return;  // done
      // The first token goes at once; later ones wait out kStreamInterval from the last
      // write, gathering what comes meanwhile (the loop does not wake this thread
      // for them), so a fast decode does not pay a write per token in threads that
      // take the cores it computes on.
      lock.wait_until(queue.changed, last_write + kStreamInterval, [&]() ET_REQUIRES(queue.mu) {
        return queue.done || queue.tokens.size() >= kMostWaiting / 2;
      });
      pb::GenerateResponse reply;
      for (int64_t t : queue.tokens) reply.add_tokens(t);
      queue.tokens.clear();
      queue.changed.notify_all();
      lock.unlock();
      const bool sent = write(reply);
      last_write = std::chrono::steady_clock::now();
      lock.lock();
      if (!sent) {
        queue.broken = true;
        queue.changed.notify_all();
        return;
      }
    }
  });
  bool not_reading = false;
  GenerationStats stats;
  Status status = with_method(*slot, [&]() -> Status {
    o.max_context =
        req.max_context() > 0 ? req.max_context() : program_context(*slot, s->cancelled);
    if (o.max_context == 0 && o.max_new_tokens == 0) o.max_new_tokens = kDefaultMostNewTokens;
    auto result = et::generate(
        *slot->method, o, slot->generation,
        [&]() {
          uint64_t micros = 0;
          return execute_locked(s->cancelled, *slot, micros);
        },
        [&](int64_t token) {
          MutexLock lock(queue.mu);
          if (queue.tokens.size() >= kMostWaiting &&
              !lock.wait_for(queue.changed, limits_.request_deadline, [&]() ET_REQUIRES(queue.mu) {
                return queue.broken || queue.tokens.size() < kMostWaiting;
              })) {
            not_reading = true;
            return false;
          }
          if (queue.broken || s->cancelled.load()) return false;
          queue.tokens.push_back(token);
          // The writer waits for a first token, or for half the most a queue holds.
          if (queue.tokens.size() == 1 || queue.tokens.size() == kMostWaiting / 2) {
            queue.changed.notify_all();
          }
          return true;
        });
    if (!result.ok()) return result.status();
    stats = *result;
    return Status();
  });
  {
    MutexLock lock(queue.mu);
    queue.done = true;
  }
  queue.changed.notify_all();
  writer.join();
  if (!status.ok()) return status;
  if (not_reading) {
    return resource_exhausted(fmt::format(
        "generate: the client read none of {} waiting tokens for {} ms; generation stopped",
        kMostWaiting, limits_.request_deadline.count()));
  }
  bool broken = false;
  {
    MutexLock lock(queue.mu);  // the writer has ended; the analysis cannot know
    broken = queue.broken;
  }
  if (broken || s->cancelled.load()) return unavailable("generate: the caller went away");
  pb::GenerateResponse last;
  last.set_done(true);
  last.set_stop_reason(stats.stop_reason);
  last.set_prompt_tokens(stats.prompt_tokens);
  last.set_generated(stats.generated);
  last.set_prefill_micros(stats.prefill_ns / 1000);
  last.set_decode_micros(stats.decode_ns / 1000);
  last.set_next_pos(stats.next_pos);
  write(last);
  return Status();
}

Status ServiceCore::get_attribute(const pb::GetAttributeRequest& req,
                                  pb::GetAttributeResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> slot, method_for(*s, req.method_handle()));
  return with_method(*slot, [&]() -> Status {
    ET_ASSIGN_OR_RETURN(const Tensor* tensor, slot->method->attribute(req.name()));
    // Inline, in one reply: refused before any copy when the reply could not carry it.
    constexpr size_t kMostAttributeBytes = size_t{128} << 20;
    if (tensor->nbytes() > kMostAttributeBytes) {
      return resource_exhausted(
          fmt::format("attribute '{}' holds {} bytes; GetAttribute returns at most {} in one reply",
                      printable(req.name()), tensor->nbytes(), kMostAttributeBytes));
    }
    const Value value = Value::from_tensor(const_cast<Tensor*>(tensor));  // only read
    return encode_output(0, value, nullptr, segment_lookup(s), *resp.mutable_value());
  });
}

Status ServiceCore::drop_segment(const pb::DropSegmentRequest& req) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(req.session()));
  MutexLock lock(s->mu);
  auto it = s->segments.find(req.segment_id());
  if (it == s->segments.end()) {
    return not_found(
        fmt::format("segment_id {} is not one of this session's segments", req.segment_id()));
  }
  // Methods whose inputs point into it keep the mapping (and its charge) until rebound.
  s->segments.erase(it);
  return Status();
}

Status ServiceCore::server_status(const std::string& peer, pb::ServerStatusResponse& resp,
                                  bool admitted, bool with_registry) const {
  resp.set_version(kVersion);
  if (with_registry) {
    for (std::string& name : KernelRegistry::global().names()) resp.add_operators(std::move(name));
    for (std::string& id : BackendRegistry::global().ids()) resp.add_backends(std::move(id));
  }
  resp.set_protocol_version(etserver::kProtocolVersion);
  resp.set_uptime_seconds(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_)
          .count()));
  // Counts of everyone's sessions and memory are for local clients (the daemon's user).
  if (!peer_key(peer).empty() || !admitted) return Status();
  std::vector<std::shared_ptr<Session>> sessions;
  {
    MutexLock lock(mu_);
    for (const auto& [token, s] : sessions_) sessions.push_back(s);
  }
  uint64_t methods = 0, segments = 0, segment_bytes = 0;
  for (const auto& s : sessions) {
    MutexLock lock(s->mu);
    methods += s->methods.size();
    segments += s->segments.size();
    segment_bytes += *s->mapped_bytes;
  }
  resp.set_sessions(sessions.size());
  resp.set_programs(registry_.size());
  resp.set_method_instances(methods);
  resp.set_segments(segments);
  resp.set_segment_bytes(segment_bytes);
  resp.set_resident_bytes(resident_bytes());
  resp.set_threads(static_cast<uint32_t>(ThreadPool::global().threads()));
  resp.set_executes(executes_.load(std::memory_order_relaxed));
  resp.set_program_loads(program_loads_.load(std::memory_order_relaxed));
  resp.set_program_loads_shared(program_loads_shared_.load(std::memory_order_relaxed));
  resp.set_idle_exit_seconds(static_cast<uint64_t>(limits_.idle_exit.count()));
  return Status();
}

}  // namespace et::server
