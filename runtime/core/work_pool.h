// The compute threads behind ThreadPool and behind XNNPACK (which reaches them through
// pthreadpool's C functions, defined by this project in pthreadpool_abi.cc).
//
// A loop is a grid of up to six dimensions, cut into tiles; participants (the calling
// thread and the workers) claim runs of tiles from one atomic cursor until none are
// left. The caller waits only for tiles that were claimed and are still running: a
// worker the scheduler has not run yet holds nothing up (pthreadpool's own pool waits
// for every worker to check in after every loop, a time slice per loop on a busy
// machine). Waits spin only briefly, and only while the machine has a CPU to spare
// (CpuLoad) and the waiting thread is not real-time (port/realtime.h); otherwise they
// sleep on a futex. When another loop holds the pool, a loop runs on the caller alone.
// Workers enter the process's real-time class, when one is set, as they start.
//
// Thread-safety: run() may be called from any thread, also from inside a running loop
// (the nested loop runs inline).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "port/cpu_load.h"
#include "port/realtime.h"

struct pthreadpool;

namespace et {

inline constexpr int kMaxLoopDims = 6;

// One loop: `dims` dimensions (at most kMaxLoopDims), dimension d of range[d] indices
// cut into tiles of tile[d] (1 for an untiled dimension). invoke is called once per tile
// with the tile's first index and its length in each dimension (the last tile of a
// dimension may be short); fn, context and uarch are passed through for it. invoke must
// not throw (the pool's loops are C calls; ThreadPool catches for its callers).
struct Loop {
  using AnyFn = void (*)();  // the caller's function, cast back by invoke
  using Invoke = void (*)(AnyFn fn, void* context, uint32_t uarch, const size_t* index,
                          const size_t* length);
  Invoke invoke = nullptr;
  AnyFn fn = nullptr;
  void* context = nullptr;
  uint32_t uarch = 0;
  int dims = 0;
  size_t range[kMaxLoopDims] = {};
  size_t tile[kMaxLoopDims] = {};
  bool disable_denormals = false;    // FTZ/DAZ on every participant while it takes part
  bool workers_sleep_after = false;  // no idle spin for the next loop once this one ends
};

class WorkPool {
 public:
  // A pool of `threads` participants (the caller and threads - 1 workers; 0 means one
  // per CPU this process may use). `load` must outlive the pool.
  static std::unique_ptr<WorkPool> create(size_t threads, CpuLoad& load);
  virtual ~WorkPool();  // joins the workers
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  size_t threads() const { return workers_.size() + 1; }

  // The same pool as pthreadpool's C handle, for XNNPACK.
  pthreadpool* native();

  // Runs every tile of `loop` once and returns when all have ended.
  void run(const Loop& loop);
  // The same on the calling thread alone (pthreadpool's null pool).
  static void run_inline(const Loop& loop);

  // Loops handed to the workers; loops run on the caller alone (busy pool, one tile,
  // one thread); waits that polled before sleeping (never while the machine is
  // saturated). For tests and metrics.
  struct Counts {
    uint64_t shared = 0;
    uint64_t inline_runs = 0;
    uint64_t spins = 0;
  };
  Counts counts() const;

 protected:
  WorkPool(size_t threads, CpuLoad& load);

 private:
  struct Snapshot;
  void worker_main(uint32_t id);
  // Claims and runs tiles of the open loop until none are left to claim.
  void take_part();
  bool load_snapshot(uint64_t cursor, Snapshot& cache) const;
  void publish(const Loop& loop, size_t tiles_per_claim, uint32_t claims);
  void wait_until_done();

  CpuLoad& load_;
  std::atomic<bool> busy_{false};  // set by the caller of the loop the workers run
  // The current loop, written by its caller before the cursor opens it; read by
  // participants (relaxed: a read is used only if a later claim on the cursor succeeds).
  std::atomic<Loop::Invoke> invoke_{nullptr};
  std::atomic<Loop::AnyFn> fn_{nullptr};
  std::atomic<void*> context_{nullptr};
  std::atomic<uint32_t> uarch_{0};
  std::atomic<int> dims_{0};
  std::atomic<size_t> range_[kMaxLoopDims] = {};
  std::atomic<size_t> tile_[kMaxLoopDims] = {};
  std::atomic<size_t> tiles_per_claim_{1};
  std::atomic<uint32_t> claims_{0};  // claims in the loop
  std::atomic<uint32_t> flags_{0};
  // Epoch (high 32 bits) and the next claim (low 32 bits).
  std::atomic<uint64_t> cursor_{0};
  // Claims of the current loop not yet ended; the caller sleeps on it.
  std::atomic<uint32_t> unfinished_{0};
  std::atomic<uint32_t> caller_sleeping_{0};
  // Bumped for each loop handed out and at shutdown; idle workers sleep on it.
  std::atomic<uint32_t> posted_{0};
  std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> shared_{0};
  std::atomic<uint64_t> inline_runs_{0};
  std::atomic<uint64_t> spins_{0};
  std::vector<pthread_t> workers_;
};

}  // namespace et
