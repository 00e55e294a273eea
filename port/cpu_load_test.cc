#include "port/cpu_load.h"

#include <gtest/gtest.h>

#include <chrono>

namespace et {
namespace {

TEST(CpuLoad, ReadsTheRunnableCountOfLoadavg) {
  EXPECT_EQ(CpuLoad::runnable_in("0.52 0.58 0.59 3/211 4511\n"), 3);
  EXPECT_EQ(CpuLoad::runnable_in("12.00 9.10 4.20 17/1024 99"), 17);
  EXPECT_EQ(CpuLoad::runnable_in(""), -1);
  EXPECT_EQ(CpuLoad::runnable_in("0.52 0.58 0.59"), -1);
  EXPECT_EQ(CpuLoad::runnable_in("0.52 0.58 0.59 x/211 1"), -1);
  EXPECT_EQ(CpuLoad::runnable_in("0.52 0.58 0.59 3"), -1);
}

// Makes `n` looks at `load`; returns what the last one said.
bool look(CpuLoad& load, int n) {
  bool saturated = false;
  for (int i = 0; i < n; ++i) {
    load.force_look_for_testing();
    saturated = load.saturated();
  }
  return saturated;
}

TEST(CpuLoad, MoreRunnableThreadsThanCpusAtHalfTheLooksIsSaturated) {
  int runnable = 3;
  CpuLoad load([&] { return runnable; }, 2);
  EXPECT_FALSE(look(load, CpuLoad::kOverToSaturate - 1));
  EXPECT_TRUE(look(load, 1));
  // A quiet look now and then does not end it; the quiet looks that outnumber the
  // busy ones do.
  runnable = 1;
  EXPECT_TRUE(look(load, 1));
  runnable = 3;
  EXPECT_TRUE(look(load, 1));
  runnable = 1;
  EXPECT_FALSE(look(load, CpuLoad::kLooks));
}

TEST(CpuLoad, AThreadThatRanForAMomentIsNotSaturation) {
  int runnable = 1;
  CpuLoad load([&] { return runnable; }, 2);
  for (int i = 0; i < 4 * CpuLoad::kLooks; ++i) {
    runnable = i % CpuLoad::kLooks == 0 ? 3 : 2;  // one look in eight over
    EXPECT_FALSE(look(load, 1)) << i;
  }
}

TEST(CpuLoad, AsManyRunnableAsCpusOrUnknownIsNotSaturated) {
  CpuLoad full([] { return 2; }, 2);  // the caller's own thread counts: still a CPU each
  EXPECT_FALSE(look(full, CpuLoad::kLooks));
  CpuLoad unknown([] { return -1; }, 2);
  EXPECT_FALSE(look(unknown, CpuLoad::kLooks));
}

TEST(SpinUntil, EndsAtOnceOnASaturatedMachine) {
  CpuLoad load([] { return 9; }, 2);
  ASSERT_TRUE(look(load, CpuLoad::kOverToSaturate));
  int polls = 0;
  // A limit far past any test's life: only the saturation ends this spin.
  const SpinEnd end = spin_until([&] { return ++polls < 0; }, std::chrono::hours(1), load);
  EXPECT_EQ(end, SpinEnd::kSaturated);
  EXPECT_EQ(polls, 64);  // at the first clock check
}

TEST(SpinUntil, EndsWhenDoneOrTimeIsUp) {
  CpuLoad load([] { return 1; }, 2);
  int polls = 0;
  EXPECT_EQ(spin_until([&] { return ++polls == 50; }, std::chrono::hours(1), load), SpinEnd::kDone);
  EXPECT_EQ(polls, 50);
  polls = 0;
  const SpinEnd end = spin_until([&] { return ++polls < 0; }, std::chrono::microseconds(0), load);
  EXPECT_EQ(end, SpinEnd::kTimeUp);
  EXPECT_EQ(polls, 64);  // at the first clock check
}

}  // namespace
}  // namespace et
