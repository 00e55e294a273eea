// The lock beside a daemon's socket (SOCKET.lock) that serialises starting and ending
// a daemon on that path. A client that found no daemon holds it while it starts one
// and waits for it to listen (client/cpp/src/spawn.cc), so that sixteen processes
// starting at once start one daemon; a daemon holds it while it stops and removes its
// socket, so that no client starts a new daemon whose socket the old one then removes.
//
// Thread-safety: a SpawnLock is used by one thread at a time.
#pragma once

#include <chrono>
#include <string>

namespace et::wire {

class SpawnLock {
 public:
  // Opens (creating, mode 0600) SOCKET.lock. held() is false until a lock call
  // succeeds; error() says why the file could not be opened, if it could not.
  explicit SpawnLock(const std::string& socket_path);
  ~SpawnLock();
  SpawnLock(const SpawnLock&) = delete;
  SpawnLock& operator=(const SpawnLock&) = delete;

  // Takes the lock if nobody holds it; false otherwise (or when the file is missing).
  bool try_lock();
  // Takes the lock, waiting up to `timeout` for its holder; false when it timed out.
  bool lock_for(std::chrono::milliseconds timeout);
  void unlock();
  bool held() const { return held_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool held_ = false;
  std::string error_;
};

}  // namespace et::wire
