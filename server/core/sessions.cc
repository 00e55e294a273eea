// The session table: opening, naming and closing sessions, and what each holds by id
// (segments, programs, method instances).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/core/printable.h"
#include "server/core/core.h"
#include "server/core/core_internal.h"
#include "server/core/system.h"
#include "server/metrics/call_scope.h"

namespace et::server {
namespace {

Status no_session_error() {
  return unauthenticated(
      "session: no open session has this token (open one with OpenSession and keep its "
      "stream open)");
}

}  // namespace

Result<std::shared_ptr<Session>> Core::open_session(const std::string& client_name,
                                                    const SessionOwner& owner) {
  auto s = std::make_shared<Session>();
  s->token = random_token();
  s->client_name = client_name;
  s->owner = owner;
  // Users the daemon serves besides its own (--socket-group) are kept apart as TCP hosts
  // are: a session limit each, and programs shared with them only once they sent them.
  s->peer_key = owner.local && owner.uid != getuid() && owner.uid != 0
                    ? fmt::format("uid:{}", owner.uid)
                    : owner.host;
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

Status Core::check_caller(const std::string& token, const SessionOwner& caller) const {
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

void Core::close_session(const std::shared_ptr<Session>& s) {
  {
    MutexLock lock(mu_);
    if (sessions_.erase(s->token) != 0 && sessions_.empty()) {
      idle_since_ = std::chrono::steady_clock::now();
    }
  }
  std::map<uint64_t, std::shared_ptr<MethodSlot>> methods;
  std::map<uint64_t, std::shared_ptr<Segment>> segments;
  std::map<uint64_t, std::shared_ptr<const SharedProgram>> programs;
  std::vector<std::shared_ptr<SessionAttachment>> attachments;
  s->cancelled = true;  // running executes stop at their next instruction
  {
    MutexLock lock(s->mu);
    if (s->closed) return;
    s->closed = true;
    methods.swap(s->methods);
    segments.swap(s->segments);
    programs.swap(s->programs);
    attachments.swap(s->attachments);
  }
  // Attachments take no new call; one being answered finishes below with its method.
  for (auto& attachment : attachments) attachment->stop();
  // Wait for running calls of the session's methods, then free them.
  for (auto& entry : methods) {
    MethodSlot& slot = *entry.second;
    slot.when_idle([&slot] {
      slot.method.reset();
      slot.inputs.clear();
    });
  }
  for (auto& attachment : attachments) attachment->join();  // each uncounts itself as it ends
  for (auto& [id, program] : programs) registry_.keep_warm(program);
  registry_.forget_asker(s->number);
  spdlog::info(
      "session {} closed: released {} method(s), {} segment(s), {} program(s), {} fast-path "
      "channel(s)",
      s->number, methods.size(), segments.size(), programs.size(), attachments.size());
}

Result<std::shared_ptr<Session>> Core::find_session(std::string_view token) const {
  MutexLock lock(mu_);
  auto it = sessions_.find(token);
  if (it == sessions_.end()) return no_session_error();
  return it->second;
}

Result<std::shared_ptr<Session>> Core::session_for(std::string_view token) const {
  if (shutting_down_) return shutting_down_error();
  auto found = find_session(token);
  if (found.ok()) metrics::CallScope::note_session((*found)->number);
  return found;
}

Result<uint64_t> Core::register_segment(const std::string& token, int fd) {
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

Status Core::drop_segment(const std::string& token, uint64_t segment_id) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  MutexLock lock(s->mu);
  auto it = s->segments.find(segment_id);
  if (it == s->segments.end()) {
    return not_found(
        fmt::format("segment_id {} is not one of this session's segments", segment_id));
  }
  // Methods whose inputs point into it keep the mapping (and its charge) until rebound.
  s->segments.erase(it);
  return Status();
}

SegmentLookup Core::segment_lookup(const std::shared_ptr<Session>& s) const {
  return [s](uint64_t id) -> Result<std::shared_ptr<Segment>> {
    MutexLock lock(s->mu);
    auto it = s->segments.find(id);
    if (it == s->segments.end()) {
      return not_found(fmt::format("segment_id {} is not one of this session's segments", id));
    }
    return it->second;
  };
}

Result<std::shared_ptr<const SharedProgram>> Core::program_for(Session& s, uint64_t id) const {
  MutexLock lock(s.mu);
  auto it = s.programs.find(id);
  if (it == s.programs.end()) return unknown_program(id);
  return it->second;
}

Result<std::shared_ptr<MethodSlot>> Core::method_for(Session& s, uint64_t handle) const {
  MutexLock lock(s.mu);
  auto it = s.methods.find(handle);
  if (it == s.methods.end()) {
    return not_found(fmt::format("method_handle {} is not one of this session's methods", handle));
  }
  return it->second;
}

}  // namespace et::server
