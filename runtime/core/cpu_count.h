// How many compute threads the process uses when nobody says: one per physical core it
// may run on. Hyperthread siblings share a core's vector units, so a second thread on a
// core slows dense kernels down; CPUs outside the process's affinity mask (taskset,
// cpusets) and beyond its cgroup CPU quota (docker --cpus, Kubernetes limits) are not
// the process's to use, and threads beyond them only wait for each other.
//
// Thread-safety: all functions are safe to call from any thread.
#pragma once

#include <cstddef>
#include <string_view>

namespace et {

// What the machine and the kernel say; 0 where a count is unknown or unlimited.
struct CpuCounts {
  size_t physical_cores = 0;  // distinct cores among the CPUs the process may run on
  size_t allowed_cpus = 0;    // CPUs in the process's affinity mask
  size_t quota_cpus = 0;      // the cgroup CPU quota, rounded up to whole CPUs
};

// The counts of this process, probed once (cpuinfo, sched_getaffinity, the cgroup v2
// cpu.max of the process's own cgroup, or cgroup v1's cfs quota and period).
const CpuCounts& probed_cpu_counts();

// The smallest known count, at least 1.
size_t default_thread_count(const CpuCounts& counts);

// The CPUs a cgroup v2 `cpu.max` file grants ("QUOTA PERIOD", or "max PERIOD" for no
// limit; cgroup v1's "-1 PERIOD" likewise), rounded up; 0 for no limit or text it
// cannot read.
size_t cpus_from_cgroup_cpu_max(std::string_view text);

}  // namespace et
