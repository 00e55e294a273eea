// A mutex the thread-safety analysis knows (port/thread_annotations.h), and the
// scoped lock that holds it, waits on condition variables and can let go early.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "port/thread_annotations.h"

namespace et {

// std::mutex, annotated. Not recursive; thread-safe.
class ET_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ET_ACQUIRE() { mu_.lock(); }
  void unlock() ET_RELEASE() { mu_.unlock(); }
  bool try_lock() ET_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds this mutex, where it cannot see so (a callback
  // run under it). Not checked at run time.
  void assert_held() const ET_ASSERT_CAPABILITY(this) {}

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex from construction to destruction (or unlock()). Waits release it while
// they wait, as std::condition_variable does; a wait's predicate runs with it held, so
// a predicate that reads guarded members says so: [&]() ET_REQUIRES(mu_) { ... }.
class ET_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ET_ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() ET_RELEASE() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Lets go before the scope ends, and takes it again.
  void unlock() ET_RELEASE() { lock_.unlock(); }
  void lock() ET_ACQUIRE() { lock_.lock(); }

  void wait(std::condition_variable& cv) { cv.wait(lock_); }
  template <typename Predicate>
  void wait(std::condition_variable& cv, Predicate ready) {
    cv.wait(lock_, ready);
  }
  template <typename Clock, typename Duration>
  std::cv_status wait_until(std::condition_variable& cv,
                            const std::chrono::time_point<Clock, Duration>& deadline) {
    return cv.wait_until(lock_, deadline);
  }
  // False when `deadline` came with `ready` still false.
  template <typename Clock, typename Duration, typename Predicate>
  bool wait_until(std::condition_variable& cv,
                  const std::chrono::time_point<Clock, Duration>& deadline, Predicate ready) {
    return cv.wait_until(lock_, deadline, ready);
  }
  template <typename Rep, typename Period, typename Predicate>
  bool wait_for(std::condition_variable& cv, const std::chrono::duration<Rep, Period>& timeout,
                Predicate ready) {
    return cv.wait_for(lock_, timeout, ready);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace et
