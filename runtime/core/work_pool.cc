#include "runtime/core/work_pool.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace et {
namespace {

// How long an idle worker polls for the next loop, and a caller for the claims still
// running, before sleeping (only while the machine has a CPU to spare). XNNPACK hands
// out one loop per operator with a few microseconds of the caller's work in between.
constexpr std::chrono::microseconds kWorkerSpin{50};
constexpr std::chrono::microseconds kCallerSpin{50};

constexpr uint32_t kFlagDenormalsOff = 1;
constexpr uint32_t kFlagSleepAfter = 2;
// A cursor's claim while its caller writes the loop: no claim is below it.
constexpr uint32_t kClosed = UINT32_MAX;
constexpr uint32_t kNoEpoch = UINT32_MAX;

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
                nullptr, 0);
}
void futex_wake(std::atomic<uint32_t>* word, int threads) {
  (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, threads, nullptr,
                nullptr, 0);
}

uint64_t cursor_of(uint32_t epoch, uint32_t claim) {
  return (static_cast<uint64_t>(epoch) << 32) | claim;
}
uint32_t epoch_of(uint64_t cursor) { return static_cast<uint32_t>(cursor >> 32); }
uint32_t claim_of(uint64_t cursor) { return static_cast<uint32_t>(cursor); }

// Flush-to-zero and denormals-are-zero on this thread while in scope (XNNPACK asks for it
// on every loop: denormal arithmetic is up to a hundred times slower).
class DenormalsOff {
 public:
  explicit DenormalsOff(bool on) : on_(on) {
    if (!on_) return;
#if defined(__x86_64__) || defined(__i386__)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | 0x8040);  // FTZ | DAZ
#elif defined(__aarch64__)
    asm volatile("mrs %0, fpcr" : "=r"(saved_));
    asm volatile("msr fpcr, %0" : : "r"(saved_ | (uint64_t{1} << 24)));  // FZ
#endif
  }
  ~DenormalsOff() {
    if (!on_) return;
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(static_cast<unsigned>(saved_));
#elif defined(__aarch64__)
    asm volatile("msr fpcr, %0" : : "r"(saved_));
#endif
  }
  DenormalsOff(const DenormalsOff&) = delete;
  DenormalsOff& operator=(const DenormalsOff&) = delete;

 private:
  bool on_;
  uint64_t saved_ = 0;
};

size_t tiles_along(const Loop& loop, int d) {
  const size_t tile = std::max<size_t>(1, loop.tile[d]);
  return (loop.range[d] + tile - 1) / tile;
}

size_t tiles_of(const Loop& loop) {
  size_t tiles = 1;
  for (int d = 0; d < loop.dims; ++d) tiles *= tiles_along(loop, d);
  return tiles;
}

// Runs tiles [begin, end) of `loop` in row-major order (the last dimension fastest),
// as pthreadpool's sequential reference does.
void run_tiles(const Loop& loop, size_t begin, size_t end) {
  size_t along[kMaxLoopDims], coord[kMaxLoopDims], index[kMaxLoopDims], length[kMaxLoopDims];
  size_t rest = begin;
  for (int d = loop.dims - 1; d >= 0; --d) {
    along[d] = tiles_along(loop, d);
    coord[d] = rest % along[d];
    rest /= along[d];
  }
  for (size_t t = begin; t < end; ++t) {
    for (int d = 0; d < loop.dims; ++d) {
      const size_t tile = std::max<size_t>(1, loop.tile[d]);
      index[d] = coord[d] * tile;
      length[d] = std::min(tile, loop.range[d] - index[d]);
    }
    loop.invoke(loop.fn, loop.context, loop.uarch, index, length);
    for (int d = loop.dims - 1; d >= 0; --d) {
      if (++coord[d] < along[d]) break;
      coord[d] = 0;
    }
  }
}

size_t usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<size_t>(CPU_COUNT(&set));
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<size_t>(online) : 1;
}

struct WorkerStart {
  WorkPool* pool;
  uint32_t id;
};

}  // namespace

// What a participant knows of the loop of one epoch.
struct WorkPool::Snapshot {
  uint32_t epoch = kNoEpoch;
  Loop loop;
  size_t tiles = 0;
  size_t tiles_per_claim = 1;
  uint32_t claims = 0;
  uint32_t flags = 0;
};

WorkPool::WorkPool(size_t threads, CpuLoad& load) : load_(load) {
  if (threads == 0) threads = usable_cpus();
  workers_.reserve(threads - 1);
  for (uint32_t id = 1; id < threads; ++id) {
    pthread_t thread;
    auto* start = new WorkerStart{this, id};
    const int error = pthread_create(
        &thread, nullptr,
        [](void* arg) -> void* {
          const WorkerStart begun = *static_cast<WorkerStart*>(arg);
          delete static_cast<WorkerStart*>(arg);
          begun.pool->worker_main(begun.id);
          return nullptr;
        },
        start);
    if (error != 0) {  // fewer workers: loops still complete, with less help
      delete start;
      break;
    }
    workers_.push_back(thread);
  }
}

WorkPool::~WorkPool() {
  stop_.store(true, std::memory_order_seq_cst);
  posted_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(&posted_, INT32_MAX);
  for (pthread_t thread : workers_) pthread_join(thread, nullptr);
}

WorkPool::Counts WorkPool::counts() const {
  return {shared_.load(std::memory_order_relaxed), inline_runs_.load(std::memory_order_relaxed),
          spins_.load(std::memory_order_relaxed)};
}

void WorkPool::run_inline(const Loop& loop) {
  const size_t tiles = tiles_of(loop);
  if (tiles == 0) return;  // run_tiles divides by every dimension's tile count
  DenormalsOff denormals(loop.disable_denormals);
  run_tiles(loop, 0, tiles);
}

void WorkPool::run(const Loop& loop) {
  const size_t tiles = tiles_of(loop);
  if (tiles == 0) return;
  // On the caller alone when nobody could help (one tile, no workers) or when the
  // workers run another loop (a nested or concurrent one). A saturated machine still
  // shares: a worker that is not scheduled claims nothing and delays nothing, and one
  // that is gets the loop more of the machine (MobileNetV2 at 50 Hz beside 2 and 4
  // burners on 2 CPUs: p99 35-38 ms shared, 43-48 ms inline; docs/fast_path.md).
  if (tiles == 1 || workers_.empty() || busy_.exchange(true, std::memory_order_acquire)) {
    inline_runs_.fetch_add(1, std::memory_order_relaxed);
    run_inline(loop);
    return;
  }
  shared_.fetch_add(1, std::memory_order_relaxed);
  // A few claims per participant: fewer trips to the cursor than one tile each, and a
  // participant that starts late still finds work to balance the end.
  size_t per_claim = std::max<size_t>(1, tiles / (threads() * 4));
  per_claim = std::max(per_claim, tiles / (kClosed - 1) + 1);
  const auto claims = static_cast<uint32_t>((tiles + per_claim - 1) / per_claim);
  publish(loop, per_claim, claims);
  posted_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    futex_wake(&posted_, static_cast<int>(std::min<size_t>(workers_.size(), claims - 1)));
  }
  take_part();
  wait_until_done();
  busy_.store(false, std::memory_order_release);
}

// A seqlock on the cursor: closed while the loop's fields are written, then opened at
// claim 0 of the next epoch. The fields are stored with release and read with acquire
// (not relaxed behind fences, which ThreadSanitizer cannot model): a reader that sees
// any field of the next loop then sees the cursor closed, so load_snapshot() never
// passes a mix of two loops.
void WorkPool::publish(const Loop& loop, size_t tiles_per_claim, uint32_t claims) {
  uint32_t epoch = epoch_of(cursor_.load(std::memory_order_relaxed)) + 1;
  if (epoch == kNoEpoch) epoch = 0;
  cursor_.store(cursor_of(epoch, kClosed), std::memory_order_relaxed);
  invoke_.store(loop.invoke, std::memory_order_release);
  fn_.store(loop.fn, std::memory_order_release);
  context_.store(loop.context, std::memory_order_release);
  uarch_.store(loop.uarch, std::memory_order_release);
  dims_.store(loop.dims, std::memory_order_release);
  for (int d = 0; d < kMaxLoopDims; ++d) {
    range_[d].store(d < loop.dims ? loop.range[d] : 1, std::memory_order_release);
    tile_[d].store(d < loop.dims ? std::max<size_t>(1, loop.tile[d]) : 1,
                   std::memory_order_release);
  }
  tiles_per_claim_.store(tiles_per_claim, std::memory_order_release);
  claims_.store(claims, std::memory_order_release);
  flags_.store((loop.disable_denormals ? kFlagDenormalsOff : 0) |
                   (loop.workers_sleep_after ? kFlagSleepAfter : 0),
               std::memory_order_release);
  unfinished_.store(claims, std::memory_order_release);
  cursor_.store(cursor_of(epoch, 0), std::memory_order_release);
}

// Reads the loop opened by `cursor`; false when it was closed or replaced meanwhile.
bool WorkPool::load_snapshot(uint64_t cursor, Snapshot& cache) const {
  Loop& loop = cache.loop;
  loop.invoke = invoke_.load(std::memory_order_acquire);
  loop.fn = fn_.load(std::memory_order_acquire);
  loop.context = context_.load(std::memory_order_acquire);
  loop.uarch = uarch_.load(std::memory_order_acquire);
  loop.dims = dims_.load(std::memory_order_acquire);
  for (int d = 0; d < kMaxLoopDims; ++d) {
    loop.range[d] = range_[d].load(std::memory_order_acquire);
    loop.tile[d] = tile_[d].load(std::memory_order_acquire);
  }
  cache.tiles_per_claim = tiles_per_claim_.load(std::memory_order_acquire);
  cache.claims = claims_.load(std::memory_order_acquire);
  cache.flags = flags_.load(std::memory_order_acquire);
  const uint64_t now = cursor_.load(std::memory_order_relaxed);
  if (epoch_of(now) != epoch_of(cursor) || claim_of(now) == kClosed) return false;
  loop.dims = std::clamp(loop.dims, 1, kMaxLoopDims);
  cache.tiles = tiles_of(loop);
  cache.epoch = epoch_of(cursor);
  return true;
}

void WorkPool::take_part() {
  // Read afresh on each call: an epoch number comes round again after 2^32 loops.
  Snapshot cache;
  uint64_t cursor = cursor_.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t claim = claim_of(cursor);
    if (claim == kClosed) return;
    if (cache.epoch != epoch_of(cursor) && !load_snapshot(cursor, cache)) {
      cursor = cursor_.load(std::memory_order_acquire);
      continue;
    }
    if (claim >= cache.claims) return;
    if (!cursor_.compare_exchange_weak(cursor, cursor + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
      continue;
    }
    {
      DenormalsOff denormals((cache.flags & kFlagDenormalsOff) != 0);
      const size_t begin = claim * cache.tiles_per_claim;
      run_tiles(cache.loop, begin, std::min(cache.tiles, begin + cache.tiles_per_claim));
    }
    if (unfinished_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_sleeping_.load(std::memory_order_seq_cst) != 0) {
      futex_wake(&unfinished_, 1);
    }
    cursor = cursor_.load(std::memory_order_acquire);
  }
}

void WorkPool::wait_until_done() {
  auto done = [this] { return unfinished_.load(std::memory_order_acquire) == 0; };
  if (done()) return;
  if (!load_.saturated() && !this_thread_is_realtime()) {
    spins_.fetch_add(1, std::memory_order_relaxed);
    if (spin_until(done, kCallerSpin, load_) == SpinEnd::kDone) return;
  }
  caller_sleeping_.store(1, std::memory_order_seq_cst);
  for (uint32_t left; (left = unfinished_.load(std::memory_order_seq_cst)) != 0;) {
    futex_wait(&unfinished_, left);
  }
  caller_sleeping_.store(0, std::memory_order_relaxed);
}

void WorkPool::worker_main(uint32_t id) {
  const std::string name = "et-pool-" + std::to_string(id);
  pthread_setname_np(pthread_self(), name.c_str());
  // Refusal was reported at start (the daemon tries the class first); a worker that
  // cannot enter it still works, as an ordinary thread.
  if (const RealtimeClass& rt = process_realtime_class(); rt.on()) (void)enter_realtime_class(rt);
  uint32_t seen = posted_.load(std::memory_order_acquire);
  while (!stop_.load(std::memory_order_acquire)) {
    take_part();
    auto posted = [&] { return posted_.load(std::memory_order_acquire) != seen; };
    const bool sleep_now = (flags_.load(std::memory_order_relaxed) & kFlagSleepAfter) != 0;
    if (!posted() && !sleep_now && !load_.saturated() && !this_thread_is_realtime()) {
      spins_.fetch_add(1, std::memory_order_relaxed);
      spin_until(posted, kWorkerSpin, load_);
    }
    while (!posted()) {
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (posted_.load(std::memory_order_seq_cst) == seen) futex_wait(&posted_, seen);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    seen = posted_.load(std::memory_order_acquire);
  }
}

}  // namespace et
