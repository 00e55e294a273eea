#include "proto/spawn_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace et::wire {

SpawnLock::SpawnLock(const std::string& socket_path) {
  const std::string path = socket_path + ".lock";
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) error_ = "cannot open " + path + ": " + std::strerror(errno);
}

SpawnLock::~SpawnLock() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

bool SpawnLock::try_lock() {
  if (fd_ < 0) return false;
  if (!held_) held_ = flock(fd_, LOCK_EX | LOCK_NB) == 0;
  return held_;
}

bool SpawnLock::lock_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!try_lock()) {
    if (fd_ < 0 || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void SpawnLock::unlock() {
  if (held_) (void)flock(fd_, LOCK_UN);
  held_ = false;
}

}  // namespace et::wire
