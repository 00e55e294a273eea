#include "arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "proto/fd_client.h"
#include "proto/fd_protocol.h"

namespace etclient {
namespace {

constexpr uint64_t kAlign = 64;
constexpr uint64_t kSegmentBytes = uint64_t{64} << 20;

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

}  // namespace

Result<uint64_t> send_descriptor(const std::string& fd_socket, const std::string& session, int fd,
                                 uint16_t kind) {
  const et::wire::FdExchange reply = et::wire::send_descriptor(fd_socket, session, fd, kind);
  if (!reply.delivered) return Status(StatusCode::kUnavailable, reply.message);
  // The daemon's codes (runtime/core/status.h): 13 Unauthenticated (no such session: the
  // daemon restarted) and 12 Unavailable (shutting down) mean the session is gone.
  if (reply.code == 12 || reply.code == 13) {
    return Status(StatusCode::kUnavailable, "et-serverd is unavailable: " + reply.message);
  }
  if (reply.code == 7) return Status(StatusCode::kResourceExhausted, reply.message);
  if (reply.code != 0) return Status(StatusCode::kInvalidArgument, reply.message);
  return reply.id;
}

Arena::~Arena() {
  for (auto& s : segments_) {
    munmap(s->base, s->size);
    close(s->fd);
  }
}

Result<Arena::Segment*> Arena::add_segment(uint64_t min_bytes) {
  const uint64_t size = std::max(kSegmentBytes, round_up(min_bytes, 1 << 20));
  auto s = std::make_unique<Segment>();
  s->fd = memfd_create("etclient", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (s->fd < 0 || ftruncate(s->fd, static_cast<off_t>(size)) != 0 ||
      fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
    if (s->fd >= 0) close(s->fd);
    return Status(StatusCode::kResourceExhausted,
                  std::string("cannot create a shared-memory segment: ") + std::strerror(errno));
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
  if (base == MAP_FAILED) {
    close(s->fd);
    return Status(StatusCode::kResourceExhausted, "cannot map a shared-memory segment");
  }
  s->base = static_cast<uint8_t*>(base);
  s->size = size;
  auto id = send_descriptor(fd_socket_, session_, s->fd, et::wire::kFdRegisterSegment);
  if (!id.ok()) {
    munmap(base, size);
    close(s->fd);
    return id.status();
  }
  s->id = *id;
  s->free[0] = size;
  segments_.push_back(std::move(s));
  return segments_.back().get();
}

Result<std::pair<Slot, std::shared_ptr<void>>> Arena::allocate(uint64_t nbytes) {
  const uint64_t want = round_up(std::max<uint64_t>(nbytes, 1), kAlign);
  et::MutexLock lock(mu_);
  uint32_t index = 0;
  std::map<uint64_t, uint64_t>::iterator hole;
  for (; index < segments_.size(); ++index) {
    auto& free = segments_[index]->free;
    hole = std::find_if(free.begin(), free.end(), [&](const auto& f) { return f.second >= want; });
    if (hole != free.end()) break;
  }
  if (index == segments_.size()) {
    auto added = add_segment(want);
    if (!added.ok()) return added.status();
    hole = (*added)->free.begin();
  }
  Segment* seg = segments_[index].get();
  const uint64_t offset = hole->first, left = hole->second - want;
  seg->free.erase(hole);
  if (left) seg->free[offset + want] = left;
  Slot slot{index, offset, want, seg->base + offset};
  // The handle keeps the arena (and so the mapping) alive: a result may outlive the
  // Client that produced it.
  std::shared_ptr<Arena> self = shared_from_this();
  std::shared_ptr<void> handle(
      nullptr, [self, index, offset, want](void*) { self->release(index, offset, want); });
  return std::make_pair(slot, std::move(handle));
}

uint64_t Arena::wire_id(uint32_t index) const {
  et::MutexLock lock(mu_);
  return index < segments_.size() ? segments_[index]->id : 0;
}

Status Arena::rebind(const std::string& fd_socket, const std::string& session) {
  et::MutexLock lock(mu_);
  fd_socket_ = fd_socket;
  session_ = session;
  for (auto& s : segments_) {
    auto id = send_descriptor(fd_socket_, session_, s->fd, et::wire::kFdRegisterSegment);
    if (!id.ok()) return id.status();
    s->id = *id;
  }
  return Status();
}

void Arena::release(uint32_t segment, uint64_t offset, uint64_t size) {
  et::MutexLock lock(mu_);
  Segment* s = segments_[segment].get();
  auto [it, inserted] = s->free.emplace(offset, size);
  auto next = std::next(it);
  if (next != s->free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    s->free.erase(next);
  }
  if (it != s->free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      s->free.erase(it);
    }
  }
}

}  // namespace etclient
