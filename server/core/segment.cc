#include "server/core/segment.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace et::server {

Result<std::shared_ptr<Segment>> Segment::adopt(int fd, size_t max_bytes) {
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};  // a mapping outlives its descriptor: nothing holds one per segment
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0) {
    return invalid_argument(
        "segment: the descriptor is not a memfd (create it with memfd_create and "
        "MFD_ALLOW_SEALING)");
  }
  if (!(seals & F_SEAL_SHRINK)) {
    return invalid_argument(
        "segment: the memfd is not sealed against shrinking (add F_SEAL_SHRINK with "
        "fcntl(F_ADD_SEALS) before handing it over)");
  }
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0) {
    return io_error(fmt::format("segment: fstatfs: {}", std::strerror(errno)));
  }
  if (fs.f_type == HUGETLBFS_MAGIC) {
    return invalid_argument(
        "segment: huge-page memfds (MFD_HUGETLB) are not accepted; create the memfd "
        "without MFD_HUGETLB");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return io_error(fmt::format("segment: fstat: {}", std::strerror(errno)));
  const auto size = static_cast<size_t>(st.st_size);
  if (size == 0) return invalid_argument("segment: the memfd is empty (ftruncate it first)");
  if (size > max_bytes) {
    return resource_exhausted(fmt::format(
        "segment: {} bytes is over this session's segment limit ({} bytes left); drop shared "
        "tensors this session no longer needs, or start et-serverd with a larger "
        "--max-segment-bytes",
        size, max_bytes));
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    return io_error(fmt::format("segment: cannot map {} bytes: {}", size, std::strerror(errno)));
  }
  std::shared_ptr<Segment> segment(new Segment);
  segment->base_ = static_cast<uint8_t*>(base);
  segment->size_ = size;
  mapped_total().fetch_add(size, std::memory_order_relaxed);
  return segment;
}

void Segment::charge_to(std::shared_ptr<std::atomic<uint64_t>> counter) {
  *counter += size_;
  charged_ = std::move(counter);
}

Segment::~Segment() {
  if (base_) {
    munmap(base_, size_);
    mapped_total().fetch_sub(size_, std::memory_order_relaxed);
  }
  if (charged_) *charged_ -= size_;
}

Result<std::span<uint8_t>> Segment::range(uint64_t offset, uint64_t length) const {
  if (offset > size_ || length > size_ - offset) {
    return out_of_range(fmt::format("bytes [{}, {} + {}) lie outside the segment's {} bytes",
                                    offset, offset, length, size_));
  }
  return std::span<uint8_t>(base_ + offset, static_cast<size_t>(length));
}

}  // namespace et::server
