// A client's shared-memory segment: a memfd the client created, sealed against
// shrinking, handed over on the descriptor socket (docs/protocol.md) and mapped here.
//
// The seal is what makes references safe: the client cannot shrink the file under a
// mapping, so reading or writing a checked range never faults. The client may still
// rewrite bytes at any time; callers copy what they must not see change mid-call
// (integer tensors that kernels use as indices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "runtime/status.h"

namespace et::server {

class Segment {
 public:
  // Takes ownership of `fd`. Errors: InvalidArgument when it is not a memfd sealed
  // with F_SEAL_SHRINK, is empty, or is larger than `max_bytes` (ResourceExhausted);
  // IoError when it cannot be mapped.
  static Result<std::shared_ptr<Segment>> adopt(int fd, size_t max_bytes);

  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  size_t size() const { return size_; }
  // The bytes [offset, offset + length). OutOfRange naming both when they do not lie
  // inside the segment (overflow-safe).
  Result<std::span<uint8_t>> range(uint64_t offset, uint64_t length) const;

 private:
  Segment() = default;
  int fd_ = -1;
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace et::server
