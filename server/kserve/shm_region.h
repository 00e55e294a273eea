// A client's system shared-memory region (Triton's shared-memory extension): the byte
// range [offset, offset + byte_size) of a POSIX shared-memory object the client
// created and named by key ("/name").
//
// Named shared memory is what an attacker controls: another user's object, a symlink
// planted in /dev/shm, an object truncated or unlinked while the daemon uses it. So:
// - open() takes only "/name" keys and opens /dev/shm/name without following a symlink
//   and without anything that can block (a path handle checked to be a regular file on
//   the tmpfs, then that inode reopened non-blocking: a FIFO or a lease planted there
//   cannot hold a daemon thread), then checks the object: owned by `owner` (the
//   registering client's uid), at least offset + byte_size long. (Not through
//   Boost.Interprocess: its open, glibc's shm_open, blocks on a FIFO.)
// - read() and write() check the object's size again on every use, and go through
//   pread/pwrite on the descriptor, never a mapping: a client that truncates its object
//   mid-call gets a short read and an error, and no SIGBUS can reach the daemon. (A
//   write racing a truncation can re-grow the client's own object, by at most the
//   region's size: the client's memory, not the daemon's.)
//
// Thread-safety: read() and write() may run concurrently (positioned I/O).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "runtime/core/status.h"

namespace et::server::kserve {

class ShmRegion {
 public:
  // Opens `key` for the client of uid `owner`. Errors, each naming the region and key:
  // InvalidArgument for a key that is not "/name" or a range that overflows;
  // NotFound when no such object exists; PermissionDenied when the object is not a
  // regular file in /dev/shm, is another user's, or cannot be opened; OutOfRange when
  // the object is smaller than offset + byte_size.
  static Result<std::shared_ptr<ShmRegion>> open(const std::string& name, const std::string& key,
                                                 uint64_t offset, uint64_t byte_size, uid_t owner);
  ~ShmRegion();
  ShmRegion(const ShmRegion&) = delete;
  ShmRegion& operator=(const ShmRegion&) = delete;

  const std::string& name() const { return name_; }
  const std::string& key() const { return key_; }
  uint64_t offset() const { return offset_; }
  uint64_t byte_size() const { return byte_size_; }
  bool writable() const { return writable_; }

  // Copies `out.size()` bytes from `at` (relative to the region) into `out`.
  // InvalidArgument when [at, at + size) is outside the region; OutOfRange when the
  // object was truncated below it; IoError on a failed read.
  Status read(uint64_t at, std::span<uint8_t> out) const;
  // Copies `in` to `at` in the region: the same checks, and PermissionDenied when the
  // daemon could open the object only for reading.
  Status write(uint64_t at, std::span<const uint8_t> in) const;

 private:
  ShmRegion() = default;
  Status check_range(uint64_t at, uint64_t n, const char* what) const;

  std::string name_, key_;
  uint64_t offset_ = 0, byte_size_ = 0;
  int fd_ = -1;
  bool writable_ = false;
};

}  // namespace et::server::kserve
