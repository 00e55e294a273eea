#include "runtime/core/program_bytes.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace et {
namespace {

// Closes a descriptor on every path out of map_file().
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::shared_ptr<const ProgramBytes>> ProgramBytes::map_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return io_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return io_error(fmt::format("cannot stat '{}': {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return io_error(fmt::format("'{}' is not a regular file", path));
  }
  auto out = std::shared_ptr<ProgramBytes>(new ProgramBytes());
  if (st.st_size == 0) return std::shared_ptr<const ProgramBytes>(out);
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    return io_error(fmt::format("cannot map '{}': {}", path, std::strerror(errno)));
  }
  out->mapping_ = p;
  out->mapping_size_ = static_cast<size_t>(st.st_size);
  out->data_ = static_cast<const uint8_t*>(p);
  out->size_ = out->mapping_size_;
  return std::shared_ptr<const ProgramBytes>(out);
}

std::shared_ptr<const ProgramBytes> ProgramBytes::copy_of(std::span<const uint8_t> bytes) {
  return adopt(std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

std::shared_ptr<const ProgramBytes> ProgramBytes::adopt(std::vector<uint8_t> bytes) {
  auto out = std::shared_ptr<ProgramBytes>(new ProgramBytes());
  out->owned_ = std::move(bytes);
  out->data_ = out->owned_.data();
  out->size_ = out->owned_.size();
  return out;
}

std::shared_ptr<const ProgramBytes> ProgramBytes::part_of(std::shared_ptr<const ProgramBytes> whole,
                                                          std::span<const uint8_t> part) {
  auto out = std::shared_ptr<ProgramBytes>(new ProgramBytes());
  out->data_ = part.data();
  out->size_ = part.size();
  out->whole_ = std::move(whole);
  return out;
}

ProgramBytes::~ProgramBytes() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
}

}  // namespace et
