#include "runtime/core/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>

#include "port/mutex.h"
#include "runtime/core/cpu_count.h"

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
  void (*body)(const void* fn, size_t begin, size_t end);
  const void* fn;
  Mutex failed_mu;
  std::exception_ptr failed ET_GUARDED_BY(failed_mu);  // the first exception of a tile
};

// The pool's loops are C: an exception leaving a tile would end the process. The first
// one is kept and rethrown on the thread that called parallel_for().
void run_tile(Loop::AnyFn, void* context, uint32_t, const size_t* index, const size_t* length) {
  auto* task = static_cast<Task*>(context);
  try {
    task->body(task->fn, index[0], index[0] + length[0]);
  } catch (...) {
    MutexLock lock(task->failed_mu);
    if (!task->failed) task->failed = std::current_exception();
  }
}

}  // namespace

ThreadPool& ThreadPool::global() {
  static ThreadPool* pool = new ThreadPool(default_threads());  // lives until exit
  return *pool;
}

ThreadPool::ThreadPool(size_t threads, CpuLoad& load) : load_(load) { set_threads(threads); }

ThreadPool::~ThreadPool() = default;

void ThreadPool::set_threads(size_t threads) {
  std::lock_guard<std::mutex> lock(resize_);
  threads_ = std::max<size_t>(1, threads);
  if (pool_) retired_.push_back(std::move(pool_));
  if (threads_ > 1) pool_ = WorkPool::create(threads_, load_);
}

void ThreadPool::run_loop(size_t n, size_t grain, Body body, const void* fn) {
  if (n == 0) return;
  grain = std::max<size_t>(1, grain);
  if (!pool_ || n <= grain) {
    body(fn, 0, n);
    return;
  }
  Task task{body, fn, {}, nullptr};
  Loop loop;
  loop.invoke = &run_tile;
  loop.context = &task;
  loop.dims = 1;
  loop.range[0] = n;
  loop.tile[0] = std::max(grain, (n + threads_ - 1) / threads_);
  // Workers sleep after the loop: the next one may be a while (the rest of the
  // instruction), and a polling worker holds a CPU another thread may need.
  loop.workers_sleep_after = true;
  pool_->run(loop);
  std::exception_ptr failed;
  {
    MutexLock failed_lock(task.failed_mu);  // every tile has ended; the analysis cannot know
    failed = task.failed;
  }
  if (failed) std::rethrow_exception(failed);
}

}  // namespace et
