// The process's compute threads (a WorkPool, work_pool.h), shared by every kernel,
// method and XNNPACK runtime.
//
// Kernels split large loops with parallel_for(). When the pool is already busy with
// another method's loop (the daemon runs many methods at once), the caller runs its
// loop inline instead of queueing behind it, so one large model cannot stall a small
// one and threads are never oversubscribed.
//
// Thread-safety: parallel_for() may be called from any thread. set_threads() must
// not race with parallel_for().
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "port/cpu_load.h"
#include "runtime/core/work_pool.h"

namespace et {

class ThreadPool {
 public:
  // The process's pool: ET_NUM_THREADS threads when that variable is set, else one per
  // physical core the process may use (cpu_count.h).
  static ThreadPool& global();

  // `load` says when the machine has no CPU to spare (then no wait spins); it must
  // outlive the pool.
  explicit ThreadPool(size_t threads, CpuLoad& load = CpuLoad::process());
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Resizes the pool; 1 runs everything on the calling thread.
  void set_threads(size_t threads);
  size_t threads() const { return threads_; }

  // The pool as pthreadpool's handle, for libraries that take one (XNNPACK); nullptr
  // when the pool has one thread. It stays valid for the pool's lifetime, across
  // set_threads() (a resized pool keeps the old one alive for earlier users).
  pthreadpool* native() const { return pool_ ? pool_->native() : nullptr; }

  // Loops shared with the workers and loops run inline, over the current pool's life.
  WorkPool::Counts counts() const { return pool_ ? pool_->counts() : WorkPool::Counts{}; }

  // Calls fn(begin, end) on chunks covering [0, n), each at least `grain` long (but
  // the last), and returns when all are done. Runs the chunks on the caller alone when
  // the pool is busy with another loop; `load` decides only whether waits may spin
  // (work_pool.h). An exception thrown by fn on a pool thread is carried to the caller
  // and rethrown there once every chunk has finished. fn is called through a pointer
  // (no std::function, which would allocate for a lambda of more than two captures:
  // an execute allocates nothing once warm).
  template <class Fn>
  void parallel_for(size_t n, size_t grain, const Fn& fn) {
    run_loop(n, grain, &call<Fn>, &fn);
  }

 private:
  using Body = void (*)(const void* fn, size_t begin, size_t end);
  template <class Fn>
  static void call(const void* fn, size_t begin, size_t end) {
    (*static_cast<const Fn*>(fn))(begin, end);
  }
  void run_loop(size_t n, size_t grain, Body body, const void* fn);

  CpuLoad& load_;
  std::mutex resize_;  // serialises set_threads()
  size_t threads_ = 1;
  std::unique_ptr<WorkPool> pool_;
  std::vector<std::unique_ptr<WorkPool>> retired_;  // handed out by native()
};

}  // namespace et
