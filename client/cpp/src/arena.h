// The client's shared memory: memfd segments, created on demand, sealed against
// shrinking, registered with the daemon on its descriptor socket, and carved into
// slots without a round trip. A segment is named here by its index (stable for the
// arena's life); the id the daemon gave it changes when a new session re-registers it
// (rebind()), so requests translate with wire_id() when they are built. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "etclient/status.h"
#include "port/mutex.h"

namespace etclient {

struct Slot {
  uint32_t segment = 0;  // index in the arena
  uint64_t offset = 0;
  uint64_t size = 0;
  uint8_t* data = nullptr;
};

class Arena : public std::enable_shared_from_this<Arena> {
 public:
  Arena(std::string fd_socket, std::string session)
      : fd_socket_(std::move(fd_socket)), session_(std::move(session)) {}
  ~Arena();

  // A slot of at least `nbytes` (64-byte aligned), held until the returned handle's
  // last copy is destroyed.
  Result<std::pair<Slot, std::shared_ptr<void>>> allocate(uint64_t nbytes);

  // The daemon's id for segment `index` in the current session.
  uint64_t wire_id(uint32_t index) const;

  // Registers every segment with a new session (after a daemon restart); new segments
  // go to it from now on.
  Status rebind(const std::string& fd_socket, const std::string& session);

 private:
  struct Segment {
    uint64_t id = 0;
    int fd = -1;
    uint8_t* base = nullptr;
    uint64_t size = 0;
    std::map<uint64_t, uint64_t> free;  // offset -> length, coalesced
  };
  Result<Segment*> add_segment(uint64_t min_bytes) ET_REQUIRES(mu_);
  void release(uint32_t segment, uint64_t offset, uint64_t size);

  std::string fd_socket_ ET_GUARDED_BY(mu_);
  std::string session_ ET_GUARDED_BY(mu_);
  mutable et::Mutex mu_;
  std::vector<std::unique_ptr<Segment>> segments_ ET_GUARDED_BY(mu_);
};

// Registers `fd` on the daemon's descriptor socket; returns the id the daemon gives.
Result<uint64_t> send_descriptor(const std::string& fd_socket, const std::string& session, int fd,
                                 uint16_t kind);

}  // namespace etclient
