// A client's shared-memory segment: a memfd the client created, sealed against
// shrinking, handed over on the descriptor socket (docs/protocol.md) and mapped here.
//
// The seal is what makes references safe: the client cannot shrink the file under a
// mapping, so reading or writing a checked range never faults. hugetlbfs memfds are
// refused: a client can punch a hole in one that the daemon's next access must fill
// from an empty huge-page pool (SIGBUS). The client may still rewrite bytes at any
// time; callers copy what they must not see change mid-call (integer tensors that
// kernels use as indices). The descriptor is closed once mapped: a segment holds a
// mapping, not a file descriptor.
//
// Accounting: a segment charges its size to a counter (the session's mapped bytes) for
// as long as it is mapped, which may outlive its registration (a bound input keeps it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "runtime/core/status.h"

namespace et::server {

class Segment {
 public:
  // Takes ownership of `fd` (closed before this returns). Errors: InvalidArgument when
  // it is not a memfd sealed with F_SEAL_SHRINK, is on hugetlbfs, is empty, or is
  // larger than `max_bytes` (ResourceExhausted); IoError when it cannot be mapped.
  static Result<std::shared_ptr<Segment>> adopt(int fd, size_t max_bytes);

  // Adds size() to `counter` now and takes it off when the segment is unmapped.
  void charge_to(std::shared_ptr<std::atomic<uint64_t>> counter);

  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  size_t size() const { return size_; }
  // Bytes of segments mapped in this process now (the metrics page).
  static uint64_t mapped_in_process() { return mapped_total().load(std::memory_order_relaxed); }
  // The bytes [offset, offset + length). OutOfRange naming both when they do not lie
  // inside the segment (overflow-safe).
  Result<std::span<uint8_t>> range(uint64_t offset, uint64_t length) const;

 private:
  Segment() = default;
  static std::atomic<uint64_t>& mapped_total() {
    static std::atomic<uint64_t> total{0};
    return total;
  }
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<std::atomic<uint64_t>> charged_;
};

}  // namespace et::server
