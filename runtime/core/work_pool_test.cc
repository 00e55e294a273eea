#include "runtime/core/work_pool.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <pthreadpool.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace et {
namespace {

CpuLoad& idle_machine() {
  static CpuLoad load([] { return 1; }, 64);
  return load;
}

// What a loop's tiles were called with: (index..., length...) -> calls.
struct Seen {
  std::mutex mu;
  std::map<std::vector<size_t>, int> calls;
  void add(std::vector<size_t> key) {
    std::lock_guard<std::mutex> lock(mu);
    ++calls[std::move(key)];
  }
};

// The calls a sequential loop over the same grid makes, as pthreadpool.h describes it.
std::map<std::vector<size_t>, int> expected(std::vector<size_t> range, std::vector<size_t> tile,
                                            bool with_lengths) {
  std::map<std::vector<size_t>, int> want;
  std::vector<size_t> index(range.size(), 0);
  const size_t dims = range.size();
  for (bool more = true; more;) {
    std::vector<size_t> key = index;
    if (with_lengths) {
      for (size_t d = 0; d < dims; ++d) key.push_back(std::min(tile[d], range[d] - index[d]));
    }
    ++want[key];
    more = false;
    for (size_t d = dims; d-- > 0;) {
      index[d] += tile[d];
      if (index[d] < range[d]) {
        more = true;
        break;
      }
      index[d] = 0;
    }
  }
  return want;
}

class PthreadpoolAbi : public ::testing::Test {
 protected:
  std::unique_ptr<WorkPool> pool_ = WorkPool::create(4, idle_machine());
  pthreadpool_t native() { return pool_->native(); }
};

TEST_F(PthreadpoolAbi, TwoDimensionalTilesCoverTheGridOnce) {
  Seen seen;
  pthreadpool_parallelize_2d_tile_2d(
      native(),
      [](void* s, size_t i, size_t j, size_t ni, size_t nj) {
        static_cast<Seen*>(s)->add({i, j, ni, nj});
      },
      &seen, 37, 53, 4, 7, 0);
  EXPECT_EQ(seen.calls, expected({37, 53}, {4, 7}, true));
  EXPECT_EQ(pool_->counts().shared, 1u);
}

TEST_F(PthreadpoolAbi, UntiledAndPartlyTiledGridsMatchTheSequentialLoop) {
  Seen seen;
  pthreadpool_parallelize_3d_tile_2d(
      native(),
      [](void* s, size_t i, size_t j, size_t k, size_t nj, size_t nk) {
        static_cast<Seen*>(s)->add({i, j, k, nj, nk});
      },
      &seen, 3, 10, 9, 4, 2, PTHREADPOOL_FLAG_YIELD_WORKERS);
  // Untiled dimensions report no length: compare on the tiled ones.
  std::map<std::vector<size_t>, int> want;
  for (const auto& [key, n] : expected({3, 10, 9}, {1, 4, 2}, true)) {
    want[{key[0], key[1], key[2], key[4], key[5]}] += n;
  }
  EXPECT_EQ(seen.calls, want);

  Seen six;
  pthreadpool_parallelize_6d_tile_2d(
      native(),
      [](void* s, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t nm,
         size_t nn) {
        static_cast<Seen*>(s)->add({i, j, k, l, m, n, nm, nn});
      },
      &six, 2, 3, 1, 2, 5, 6, 2, 4, 0);
  std::map<std::vector<size_t>, int> want6;
  for (const auto& [key, n] : expected({2, 3, 1, 2, 5, 6}, {1, 1, 1, 1, 2, 4}, true)) {
    want6[{key[0], key[1], key[2], key[3], key[4], key[5], key[10], key[11]}] += n;
  }
  EXPECT_EQ(six.calls, want6);

  Seen one;
  pthreadpool_parallelize_1d_with_uarch(
      native(),
      [](void* s, uint32_t uarch, size_t i) {
        static_cast<Seen*>(s)->add({uarch, i});
      },
      &one, 3, 7, 100, 0);
  std::map<std::vector<size_t>, int> want1;
  for (size_t i = 0; i < 100; ++i) want1[{3, i}] = 1;  // the default uarch, always
  EXPECT_EQ(one.calls, want1);
}

TEST_F(PthreadpoolAbi, ANullPoolOrAnEmptyRangeRunsOnTheCaller) {
  const auto caller = std::this_thread::get_id();
  struct Context {
    std::thread::id caller;
    std::atomic<int> calls{0}, elsewhere{0};
  } context{caller};
  pthreadpool_parallelize_2d(
      nullptr,
      [](void* c, size_t, size_t) {
        auto* ctx = static_cast<Context*>(c);
        ++ctx->calls;
        if (std::this_thread::get_id() != ctx->caller) ++ctx->elsewhere;
      },
      &context, 8, 9, 0);
  EXPECT_EQ(context.calls.load(), 72);
  EXPECT_EQ(context.elsewhere.load(), 0);
  EXPECT_EQ(pthreadpool_get_threads_count(nullptr), 1u);
  pthreadpool_parallelize_2d(
      native(), [](void* c, size_t, size_t) { ++static_cast<Context*>(c)->calls; }, &context, 0, 9,
      0);
  EXPECT_EQ(context.calls.load(), 72);
  pthreadpool_parallelize_2d(  // an empty range without a pool: no call, no division by 0
      nullptr, [](void* c, size_t, size_t) { ++static_cast<Context*>(c)->calls; }, &context, 8, 0,
      0);
  EXPECT_EQ(context.calls.load(), 72);
  EXPECT_EQ(pthreadpool_get_threads_count(native()), 4u);
}

TEST_F(PthreadpoolAbi, CallersOnSeveralThreadsAllComplete) {
  std::vector<std::thread> callers;
  std::atomic<size_t> wrong{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        std::array<std::atomic<int>, 64> hits{};
        pthreadpool_parallelize_1d_tile_1d(
            native(),
            [](void* h, size_t start, size_t n) {
              auto* counts = static_cast<std::array<std::atomic<int>, 64>*>(h);
              for (size_t i = start; i < start + n; ++i) ++(*counts)[i];
            },
            &hits, hits.size(), 3, 0);
        for (auto& h : hits) wrong += h.load() != 1;
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0u);
  const WorkPool::Counts counts = pool_->counts();
  EXPECT_EQ(counts.shared + counts.inline_runs, 800u);
}

#if defined(__x86_64__) || defined(__i386__)
TEST_F(PthreadpoolAbi, DenormalsAreFlushedOnEveryParticipantForTheCallOnly) {
  std::atomic<int> without_ftz{0};
  const unsigned before = _mm_getcsr();
  pthreadpool_parallelize_1d(
      native(),
      [](void* w, size_t) {
        if ((_mm_getcsr() & 0x8040) != 0x8040) ++*static_cast<std::atomic<int>*>(w);
      },
      &without_ftz, 256, PTHREADPOOL_FLAG_DISABLE_DENORMALS);
  EXPECT_EQ(without_ftz.load(), 0);
  EXPECT_EQ(_mm_getcsr(), before);
}
#endif

// ---- On a saturated machine a waiting caller sleeps at once -----------------------

CpuLoad& saturated_machine() {
  static CpuLoad& load = []() -> CpuLoad& {
    static CpuLoad seen([] { return 65; }, 64);
    for (int i = 0; i < CpuLoad::kOverToSaturate; ++i) {
      seen.force_look_for_testing();
      seen.saturated();
    }
    return seen;
  }();
  return load;
}

// Whether thread `tid` of this process is blocked in a futex wait (the first field of
// /proc/self/task/TID/syscall is the number of the system call it is in).
bool in_futex_wait(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  long number = -1;
  return (in >> number) && number == SYS_futex;
}

TEST(WorkPool, OnASaturatedMachineTheCallerSleepsWithoutPolling) {
  auto pool = WorkPool::create(2, saturated_machine());
  struct Context {
    pid_t caller = static_cast<pid_t>(syscall(SYS_gettid));
    std::atomic<bool> worker_started{false};
    std::atomic<bool> caller_slept{false};
    std::chrono::steady_clock::time_point deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
  } context;
  // Two tiles: the caller's waits until the worker has the other; the worker's ends
  // only once the caller, out of tiles, is asleep waiting for it (a minute at most).
  pthreadpool_parallelize_1d(
      pool->native(),
      [](void* c, size_t) {
        auto* ctx = static_cast<Context*>(c);
        if (static_cast<pid_t>(syscall(SYS_gettid)) == ctx->caller) {
          while (!ctx->worker_started.load() && std::chrono::steady_clock::now() < ctx->deadline) {
            std::this_thread::yield();
          }
          return;
        }
        ctx->worker_started.store(true);
        while (std::chrono::steady_clock::now() < ctx->deadline) {
          if (in_futex_wait(ctx->caller)) {
            ctx->caller_slept.store(true);
            return;
          }
          std::this_thread::yield();
        }
      },
      &context, 2, 0);
  EXPECT_TRUE(context.worker_started.load());
  EXPECT_TRUE(context.caller_slept.load());
  EXPECT_EQ(pool->counts().spins, 0u) << "the caller polled before sleeping";
}

// ---- A worker the scheduler does not run holds nothing up ------------------------

sem_t g_release;
std::atomic<int> g_held{0};

void hold_here(int) {
  g_held.store(1);
  while (sem_wait(&g_release) != 0) {
  }
  g_held.store(0);
}

// The thread ids of this process's threads named `name`.
std::vector<pid_t> threads_named(const std::string& name) {
  std::vector<pid_t> found;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return found;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
    std::string line;
    if (std::getline(comm, line) && line == name) found.push_back(std::stoi(entry->d_name));
  }
  closedir(dir);
  return found;
}

TEST(WorkPool, ALoopEndsWhileAWorkerCannotRun) {
  ASSERT_EQ(sem_init(&g_release, 0, 0), 0);
  struct sigaction action {};
  action.sa_handler = &hold_here;
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);
  auto pool = WorkPool::create(3, idle_machine());
  std::vector<pid_t> worker;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((worker = threads_named("et-pool-2")).empty() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(worker.size(), 1u);
  // Worker 2 now sits in a signal handler (as if never scheduled) until released.
  ASSERT_EQ(syscall(SYS_tgkill, getpid(), worker[0], SIGUSR1), 0);
  while (g_held.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(g_held.load(), 1);
  // Released after a minute whatever happens, so a pool that waits for every worker
  // fails this test instead of hanging it.
  std::thread backstop([&] {
    while (g_held.load() != 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (g_held.load() != 0) sem_post(&g_release);
  });
  std::atomic<size_t> ran{0};
  for (int round = 0; round < 100; ++round) {
    pthreadpool_parallelize_1d(
        pool->native(), [](void* r, size_t) { ++*static_cast<std::atomic<size_t>*>(r); }, &ran, 64,
        0);
  }
  const bool still_held = g_held.load() == 1;
  EXPECT_TRUE(still_held) << "the loops waited for the worker that could not run";
  EXPECT_EQ(ran.load(), 6400u);
  if (still_held) sem_post(&g_release);
  backstop.join();
  pool.reset();
  sigaction(SIGUSR1, &previous, nullptr);
  sem_destroy(&g_release);
}

}  // namespace
}  // namespace et
