// Programs in sessions: loading (by hash, by preloaded name, from bytes, a segment or a
// file descriptor), describing, verifying bundled test cases, unloading.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/core/printable.h"
#include "server/core/core.h"
#include "server/core/core_internal.h"
#include "server/core/system.h"

namespace et::server {

Result<uint64_t> Core::attach_program(Session& s, std::shared_ptr<const SharedProgram> program,
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

Status Core::program_bytes_fit(const Session& s, uint64_t more) const {
  const uint64_t limit = limits_.max_program_bytes_per_session;
  if (more <= limit && s.program_bytes <= limit - more) return Status();
  return resource_exhausted(
      fmt::format("this session holds {} bytes of programs; {} more would pass its limit of {} "
                  "(--max-program-bytes-per-session); unload one or raise it",
                  s.program_bytes, more, limit));
}

Result<uint64_t> Core::load_program_fd(const std::string& token, int fd) {
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

Result<std::span<const uint8_t>> Core::bytes_of(const std::shared_ptr<Session>& s,
                                                const ByteSource& from, const char* field,
                                                std::shared_ptr<Segment>& holder) const {
  if (const auto* inline_bytes = std::get_if<std::span<const uint8_t>>(&from)) {
    return *inline_bytes;
  }
  const SegmentRange& r = std::get<SegmentRange>(from);
  auto found = segment_lookup(s)(r.segment_id);
  if (!found.ok()) return found.status().with_context(field);
  holder = *found;
  auto range = holder->range(r.offset, r.length);
  if (!range.ok()) return range.status().with_context(field);
  return std::span<const uint8_t>(*range);
}

Result<Core::LoadedProgram> Core::load_program(const std::string& token,
                                               const ProgramSource& source) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  std::shared_ptr<const SharedProgram> program;
  bool existed = true;
  if (std::holds_alternative<ProgramByHash>(source.program)) {
    if (source.sha256.empty()) {
      return invalid_argument("sha256: give the program's hash, its bytes, or a preloaded name");
    }
    if (source.data) {
      return invalid_argument(
          "data_bytes/data_segment: send the program's bytes with its data file's (or "
          "neither, to load a pair the daemon has by their hashes)");
    }
    // Sessions asking for one program at once: the first is told to send it, the
    // others wait for that upload instead of all sending the bytes.
    // (A busy machine can take seconds to start the sender; a sender that closes its
    // session lets the others go at once.)
    program = registry_.find_or_await_upload(source.sha256, source.data_sha256, s->number,
                                             s->peer_key, std::chrono::milliseconds(10'000));
    // A program another host uploaded is not found by its hash alone: a remote
    // client learns nothing of other tenants' models and sends the bytes once.
    if (program && program->name.empty() && !program->uploaded_by(s->peer_key)) {
      program = nullptr;
    }
    if (!program) {
      return not_found(fmt::format(
          "sha256: the daemon has no program {}{}; send its bytes (program_bytes or segment{})",
          source.sha256, source.data_sha256.empty() ? "" : " with data file " + source.data_sha256,
          source.data_sha256.empty() ? "" : ", and data_bytes or data_segment"));
    }
  } else if (const auto* by_name = std::get_if<ProgramByName>(&source.program)) {
    // While the model repository loads at start, the name may be on its way.
    program = registry_.find_preloaded(by_name->name, limits_.request_deadline);
    if (!program) {
      return not_found(
          fmt::format("preloaded_name: no preloaded program '{}' (ListPrograms "
                      "names them)",
                      printable(by_name->name)));
    }
  } else {
    // However this upload ends (refused by a limit, say), sessions waiting for it
    // stop waiting (a successful add() has let them go already).
    struct Release {
      SharedPrograms& registry;
      const ProgramSource& source;
      uint64_t session;
      ~Release() { registry.release_claim(source.sha256, source.data_sha256, session); }
    } release{registry_, source, s->number};
    std::shared_ptr<Segment> segment, data_segment;
    ET_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes,
                        bytes_of(s, std::get<ByteSource>(source.program), "segment", segment));
    std::span<const uint8_t> data;
    if (source.data) {
      const bool sent_inline = std::holds_alternative<std::span<const uint8_t>>(*source.data);
      ET_ASSIGN_OR_RETURN(
          data,
          bytes_of(s, *source.data, sent_inline ? "data_bytes" : "data_segment", data_segment));
      if (data.empty()) {
        return invalid_argument(sent_inline ? "data_bytes: the data file is empty"
                                            : "data_segment: the range is empty");
      }
    }
    const uint64_t total = uint64_t{bytes.size()} + data.size();
    {
      // Refused before the bytes are copied and verified, not after.
      MutexLock lock(s->mu);
      ET_RETURN_IF_ERROR(program_bytes_fit(*s, total));
    }
    if (total > limits_.max_program_bytes) {
      return resource_exhausted(
          fmt::format("program: {} bytes{} is over the limit of {} "
                      "(--max-program-bytes)",
                      total, data.empty() ? "" : " with its data file", limits_.max_program_bytes));
    }
    auto added = registry_.add(bytes, source.sha256, data, source.data_sha256, s->peer_key);
    if (!added.ok()) return added.status().with_context("program");
    program = added->first;
    existed = added->second;
    if (!existed) {
      spdlog::info("program {} loaded ({} bytes{}) by session {}", program->sha256.substr(0, 12),
                   program->size_bytes,
                   program->data_sha256.empty()
                       ? std::string()
                       : fmt::format(", data file {} of {} bytes",
                                     program->data_sha256.substr(0, 12), program->data_size_bytes),
                   s->number);
    }
  }
  bool attached = false;
  ET_ASSIGN_OR_RETURN(uint64_t id, attach_program(*s, program, &attached));
  count_load(existed, attached);
  return LoadedProgram{{id, std::move(program)}, existed || attached};
}

Result<std::vector<SessionProgram>> Core::session_programs(const std::string& token) const {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  std::vector<SessionProgram> programs;
  MutexLock lock(s->mu);
  for (const auto& [id, p] : s->programs) programs.push_back({id, p});
  return programs;
}

Result<SessionProgram> Core::session_program(const std::string& token, uint64_t program_id) const {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const SharedProgram> p, program_for(*s, program_id));
  return SessionProgram{program_id, std::move(p)};
}

Result<VerifyReport> Core::verify_program(const std::string& token, uint64_t program_id,
                                          VerifyOptions options) {
  const auto arrived = std::chrono::steady_clock::now();
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const SharedProgram> p, program_for(*s, program_id));
  options.method_options.max_planned_bytes = limits_.max_method_bytes;
  options.limits.deadline = arrived + limits_.request_deadline;
  options.limits.cancelled = &s->cancelled;
  options.limits.max_instructions = limits_.max_instructions;
  // Its cases execute, so they take a worker as every call's execute does: a burst of
  // verifications cannot execute more programs at once than --workers.
  ET_RETURN_IF_ERROR(take_worker(options.limits.deadline));
  WorkerHold worker_hold{*this};
  return verify_bundled(p->program, options);
}

Status Core::unload_program(const std::string& token, uint64_t program_id) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  std::vector<std::shared_ptr<MethodSlot>> dropped;
  std::shared_ptr<const SharedProgram> released;
  {
    MutexLock lock(s->mu);
    auto it = s->programs.find(program_id);
    if (it == s->programs.end()) return unknown_program(program_id);
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

}  // namespace et::server
