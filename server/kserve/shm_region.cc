#include "server/kserve/shm_region.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "runtime/core/printable.h"

namespace et::server::kserve {
namespace {

// Opens /dev/shm/<name> without following a symlink and without anything that can
// block: first a path handle (O_PATH opens no content: a FIFO planted there cannot
// hold the thread), checked to be a regular file on the tmpfs before any real open;
// then the same inode reopened through /proc/self/fd (no second path lookup to race)
// with O_NONBLOCK (a lease the client holds fails the open at once, not after 45 s).
// Returns the descriptor or -errno; `why` names a failed check.
int open_object(const std::string& name, bool writable, struct stat& st, std::string& why) {
  const std::string path = "/dev/shm/" + name;
  const int handle = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (handle < 0) return -errno;
  struct statfs fs {};
  if (fstat(handle, &st) != 0 || fstatfs(handle, &fs) != 0) {
    const int err = errno;
    close(handle);
    return -err;
  }
  if (S_ISLNK(st.st_mode)) {
    close(handle);
    return -ELOOP;
  }
  if (!S_ISREG(st.st_mode) || static_cast<unsigned long>(fs.f_type) != TMPFS_MAGIC) {
    close(handle);
    why = "not a shared-memory object (a regular file on the /dev/shm tmpfs)";
    return -EPERM;
  }
  const std::string self = "/proc/self/fd/" + std::to_string(handle);
  int fd = ::open(self.c_str(), (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC);
  const int err = errno;
  close(handle);
  if (fd < 0) return -err;
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace

Result<std::shared_ptr<ShmRegion>> ShmRegion::open(const std::string& name, const std::string& key,
                                                   uint64_t offset, uint64_t byte_size,
                                                   uid_t owner) {
  const std::string where = fmt::format("region '{}' (key '{}')", printable(name), printable(key));
  if (key.size() < 2 || key[0] != '/' || key.find('/', 1) != std::string::npos ||
      key.size() > NAME_MAX + 1 || key == "/." || key == "/..") {
    return invalid_argument(fmt::format(
        "{}: a key is '/' and a name without '/' (a POSIX shared-memory object in /dev/shm)",
        where));
  }
  uint64_t end = 0;
  if (__builtin_add_overflow(offset, byte_size, &end) || end > uint64_t{INT64_MAX}) {
    return invalid_argument(
        fmt::format("{}: offset {} + byte_size {} overflows", where, offset, byte_size));
  }
  auto region = std::shared_ptr<ShmRegion>(new ShmRegion());
  region->name_ = name;
  region->key_ = key;
  region->offset_ = offset;
  region->byte_size_ = byte_size;
  struct stat st {};
  std::string why;
  int fd = open_object(key.substr(1), true, st, why);
  region->writable_ = fd >= 0;
  if (fd == -EACCES) fd = open_object(key.substr(1), false, st, why);
  if (fd < 0) {
    if (fd == -ENOENT) {
      return not_found(
          fmt::format("{}: no such shared-memory object; create it first "
                      "(tritonclient.utils.shared_memory.create_shared_memory_region)",
                      where));
    }
    if (fd == -ELOOP) {
      return permission_denied(
          fmt::format("{}: /dev/shm{} is a symbolic link; register the "
                      "shared-memory object itself",
                      where, printable(key)));
    }
    if (!why.empty()) return permission_denied(fmt::format("{}: {}", where, why));
    return permission_denied(
        fmt::format("{}: the daemon cannot open it: {}", where, std::strerror(-fd)));
  }
  region->fd_ = fd;
  // The descriptor's own inode (the same one checked through the path handle).
  if (fstat(fd, &st) != 0) {
    return io_error(fmt::format("{}: fstat: {}", where, std::strerror(errno)));
  }
  if (st.st_uid != owner) {
    return permission_denied(
        fmt::format("{}: the object belongs to uid {}, not to this client's uid {}; register "
                    "only objects your own user created",
                    where, st.st_uid, owner));
  }
  if (static_cast<uint64_t>(st.st_size) < end) {
    return out_of_range(
        fmt::format("{}: the object holds {} bytes, fewer than offset {} + "
                    "byte_size {}",
                    where, st.st_size, offset, byte_size));
  }
  return region;
}

ShmRegion::~ShmRegion() {
  if (fd_ >= 0) close(fd_);
}

Status ShmRegion::check_range(uint64_t at, uint64_t n, const char* what) const {
  if (at > byte_size_ || n > byte_size_ - at) {
    return invalid_argument(fmt::format(
        "region '{}': {} {} bytes at offset {} reaches past its {} bytes; register a larger "
        "region or give a smaller shared_memory_byte_size",
        printable(name_), what, n, at, byte_size_));
  }
  struct stat st {};
  if (fstat(fd_, &st) != 0) {
    return io_error(fmt::format("region '{}': fstat: {}", printable(name_), std::strerror(errno)));
  }
  if (static_cast<uint64_t>(st.st_size) < offset_ + at + n) {
    return out_of_range(fmt::format(
        "region '{}': the shared-memory object '{}' was truncated to {} bytes, fewer than the "
        "{} registered; unregister it and register it again at its new size",
        printable(name_), printable(key_), st.st_size, offset_ + byte_size_));
  }
  return Status();
}

Status ShmRegion::read(uint64_t at, std::span<uint8_t> out) const {
  ET_RETURN_IF_ERROR(check_range(at, out.size(), "reading"));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset_ + at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return io_error(fmt::format("region '{}': read: {}", printable(name_), std::strerror(errno)));
    }
    if (n == 0) {  // truncated after the check
      return out_of_range(
          fmt::format("region '{}': the shared-memory object '{}' was truncated while being read; "
                      "unregister it and register it again at its new size",
                      printable(name_), printable(key_)));
    }
    done += static_cast<size_t>(n);
  }
  return Status();
}

Status ShmRegion::write(uint64_t at, std::span<const uint8_t> in) const {
  if (!writable_) {
    return permission_denied(fmt::format(
        "region '{}': the daemon could open '{}' for reading only; give it write permission "
        "(mode 0600, your user) to receive outputs there",
        printable(name_), printable(key_)));
  }
  ET_RETURN_IF_ERROR(check_range(at, in.size(), "writing"));
  size_t done = 0;
  while (done < in.size()) {
    const ssize_t n =
        pwrite(fd_, in.data() + done, in.size() - done, static_cast<off_t>(offset_ + at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return io_error(fmt::format("region '{}': write: {}", printable(name_),
                                  n < 0 ? std::strerror(errno) : "nothing written"));
    }
    done += static_cast<size_t>(n);
  }
  return Status();
}

}  // namespace et::server::kserve
