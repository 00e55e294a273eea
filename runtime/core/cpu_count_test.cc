#include "runtime/core/cpu_count.h"

#include <gtest/gtest.h>

namespace et {
namespace {

TEST(CpuCount, CgroupQuotaRoundsUpToWholeCpus) {
  EXPECT_EQ(cpus_from_cgroup_cpu_max("200000 100000\n"), 2u);
  EXPECT_EQ(cpus_from_cgroup_cpu_max("150000 100000\n"), 2u);
  EXPECT_EQ(cpus_from_cgroup_cpu_max("50000 100000"), 1u);
}

TEST(CpuCount, UnlimitedOrUnreadableQuotaIsUnknown) {
  EXPECT_EQ(cpus_from_cgroup_cpu_max("max 100000\n"), 0u);
  EXPECT_EQ(cpus_from_cgroup_cpu_max("-1 100000\n"), 0u);
  EXPECT_EQ(cpus_from_cgroup_cpu_max(""), 0u);
  EXPECT_EQ(cpus_from_cgroup_cpu_max("100000"), 0u);
  EXPECT_EQ(cpus_from_cgroup_cpu_max("100000 0"), 0u);
  EXPECT_EQ(cpus_from_cgroup_cpu_max("garbage"), 0u);
}

TEST(CpuCount, SmallestKnownCountWins) {
  EXPECT_EQ(default_thread_count({.physical_cores = 8, .allowed_cpus = 16, .quota_cpus = 0}), 8u);
  EXPECT_EQ(default_thread_count({.physical_cores = 8, .allowed_cpus = 3, .quota_cpus = 0}), 3u);
  EXPECT_EQ(default_thread_count({.physical_cores = 8, .allowed_cpus = 16, .quota_cpus = 2}), 2u);
  EXPECT_EQ(default_thread_count({.physical_cores = 0, .allowed_cpus = 0, .quota_cpus = 0}), 1u);
}

TEST(CpuCount, ThisProcessHasAtLeastOneCoreAndNoMoreThanItMayUse) {
  const CpuCounts& counts = probed_cpu_counts();
  EXPECT_GE(counts.physical_cores, 1u);
  EXPECT_GE(counts.allowed_cpus, 1u);
  EXPECT_LE(counts.physical_cores, counts.allowed_cpus);
  EXPECT_LE(default_thread_count(counts), counts.allowed_cpus);
}

}  // namespace
}  // namespace et
