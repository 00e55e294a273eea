#include "runtime/core/thread_pool.h"

#include <pthreadpool.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>

#include "port/mutex.h"
#include "runtime/core/cpu_count.h"

// pthreadpool is not built with ThreadSanitizer, so the happens-before its own atomics
// give between a caller and the workers is invisible to TSan; these annotations state it.
#if defined(__SANITIZE_THREAD__)
#define ET_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ET_TSAN 1
#endif
#endif
#ifdef ET_TSAN
#include <sanitizer/tsan_interface.h>
#define ET_TSAN_ACQUIRE(p) __tsan_acquire(p)
#define ET_TSAN_RELEASE(p) __tsan_release(p)
#else
#define ET_TSAN_ACQUIRE(p) ((void)(p))
#define ET_TSAN_RELEASE(p) ((void)(p))
#endif

namespace et {
namespace {

size_t default_threads() {
  if (const char* env = std::getenv("ET_NUM_THREADS")) {
    const long n = std::strtol(env, nullptr, 10);
    if (n > 0) return static_cast<size_t>(n);
  }
  return default_thread_count(probed_cpu_counts());
}

struct Task {
  const std::function<void(size_t, size_t)>* fn;
  size_t n;
  Mutex failed_mu;
  std::exception_ptr failed ET_GUARDED_BY(failed_mu);  // the first exception of a tile
};

// pthreadpool is C: an exception leaving a tile would end the process. The first one
// is kept and rethrown on the thread that called parallel_for().
void run_tile(void* context, size_t start, size_t tile) {
  auto* task = static_cast<Task*>(context);
  ET_TSAN_ACQUIRE(task);
  try {
    (*task->fn)(start, std::min(task->n, start + tile));
  } catch (...) {
    MutexLock lock(task->failed_mu);
    if (!task->failed) task->failed = std::current_exception();
  }
  ET_TSAN_RELEASE(task);
}

}  // namespace

void ThreadPool::Deleter::operator()(pthreadpool* p) const { pthreadpool_destroy(p); }

ThreadPool& ThreadPool::global() {
  static ThreadPool* pool = new ThreadPool(default_threads());  // lives until exit
  return *pool;
}

ThreadPool::ThreadPool(size_t threads, CpuLoad& load) : load_(load) { set_threads(threads); }

ThreadPool::~ThreadPool() = default;

void ThreadPool::set_threads(size_t threads) {
  std::lock_guard<std::mutex> lock(busy_);
  threads_ = std::max<size_t>(1, threads);
  if (pool_) retired_.push_back(std::move(pool_));
  pool_.reset(threads_ > 1 ? pthreadpool_create(threads_) : nullptr);
  if (!pool_) threads_ = 1;
}

void ThreadPool::parallel_for(size_t n, size_t grain,
                              const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  grain = std::max<size_t>(1, grain);
  // Inline when the pool is busy with another loop, or when the machine has no CPU to
  // spare: a loop split across threads that cannot all run ends only when the last
  // of them is scheduled (a time slice later), one run inline ends when its work does.
  std::unique_lock<std::mutex> lock(busy_, std::try_to_lock);
  if (!lock.owns_lock() || !pool_ || n <= grain || load_.saturated()) {
    fn(0, n);
    return;
  }
  const size_t tile = std::max(grain, (n + threads_ - 1) / threads_);
  Task task{&fn, n, {}, nullptr};
  ET_TSAN_RELEASE(&task);
  // Workers sleep after the loop instead of spinning for the next one (a million
  // pauses: milliseconds of a CPU another thread may need).
  pthreadpool_parallelize_1d_tile_1d(pool_.get(), &run_tile, &task, n, tile,
                                     PTHREADPOOL_FLAG_YIELD_WORKERS);
  ET_TSAN_ACQUIRE(&task);
  lock.unlock();
  std::exception_ptr failed;
  {
    MutexLock failed_lock(task.failed_mu);  // every tile has ended; the analysis cannot know
    failed = task.failed;
  }
  if (failed) std::rethrow_exception(failed);
}

}  // namespace et
