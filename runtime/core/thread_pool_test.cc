#include "runtime/core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <vector>

namespace et {
namespace {

// Loads that never and always report saturation.
CpuLoad& idle_machine() {
  static CpuLoad load([] { return 1; }, 64);
  return load;
}
CpuLoad& saturated_machine() {
  static CpuLoad& load = []() -> CpuLoad& {
    static CpuLoad seen([] { return 65; }, 64);
    for (int i = 0; i < CpuLoad::kOverToSaturate; ++i) {  // saturation takes that many looks
      seen.force_look_for_testing();
      seen.saturated();
    }
    return seen;
  }();
  return load;
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  ThreadPool pool(4, idle_machine());
  std::vector<std::atomic<int>> seen(1000);
  pool.parallel_for(seen.size(), 7, [&](size_t begin, size_t end) {
    EXPECT_LT(begin, end);
    for (size_t i = begin; i < end; ++i) seen[i]++;
  });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
}

TEST(ThreadPool, NestedLoopRunsInlineInsteadOfWaiting) {
  ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.parallel_for(4, 1, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      // The pool is busy with the outer loop: this must not deadlock.
      pool.parallel_for(10, 1, [&](size_t b, size_t e) { inner += static_cast<int>(e - b); });
    }
  });
  EXPECT_EQ(inner.load(), 40);
}

// The chunks a loop of 64 indices was run in.
size_t chunks_of_a_loop(ThreadPool& pool) {
  std::atomic<size_t> chunks{0};
  pool.parallel_for(64, 1, [&](size_t begin, size_t end) {
    ++chunks;
    EXPECT_LT(begin, end);
  });
  return chunks.load();
}

TEST(ThreadPool, ASaturatedMachineStillSharesLoopsButNeverSpins) {
  ThreadPool pool(4, saturated_machine());
  for (int i = 0; i < 100; ++i) {
    std::atomic<size_t> ran{0};
    pool.parallel_for(64, 1, [&](size_t begin, size_t end) { ran += end - begin; });
    ASSERT_EQ(ran.load(), 64u);
  }
  EXPECT_EQ(pool.counts().shared, 100u);
  EXPECT_EQ(pool.counts().spins, 0u);  // every wait slept at once
}

TEST(ThreadPool, AnIdleMachineSplitsLoopsAcrossThePool) {
  ThreadPool pool(4, idle_machine());
  EXPECT_EQ(chunks_of_a_loop(pool), 4u);  // one tile of 16 per thread
}

TEST(ThreadPool, OneThreadRunsOnTheCaller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.threads(), 1u);
  size_t calls = 0;
  pool.parallel_for(100, 1, [&](size_t begin, size_t end) {
    ++calls;
    EXPECT_EQ(begin, 0u);
    EXPECT_EQ(end, 100u);
  });
  EXPECT_EQ(calls, 1u);
}

}  // namespace
}  // namespace et

TEST(ThreadPool, AnExceptionOnAPoolThreadReachesTheCaller) {
  et::ThreadPool pool(4, et::idle_machine());
  EXPECT_THROW(pool.parallel_for(64, 1, [](size_t, size_t) { throw std::bad_alloc(); }),
               std::bad_alloc);
  std::atomic<size_t> ran{0};
  pool.parallel_for(64, 1, [&](size_t begin, size_t end) { ran += end - begin; });
  EXPECT_EQ(ran.load(), 64u);  // the pool still works
}
