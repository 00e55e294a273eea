#include "runtime/core/cpu_count.h"

#include <cpuinfo.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace et {
namespace {

// Parses the unsigned number at the front of `text` and drops it; false if there is none.
bool take_number(std::string_view& text, unsigned long long& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (error != std::errc() || end == text.data()) return false;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The process's cgroup v2 path ("0::/some/group" in /proc/self/cgroup); empty if none.
std::string own_cgroup() {
  std::istringstream lines(read_file("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return {};
}

size_t probe_quota_cpus() {
  // cgroup v2: the tightest cpu.max from the process's own group up to the root (a
  // systemd slice's CPUQuota or a Kubernetes pod limit sits on a parent). Inside a
  // container the cgroup namespace makes the own group "/", the container's limit.
  size_t tightest = 0;
  bool any = false;
  std::string group = own_cgroup();
  while (true) {
    const std::string text = read_file("/sys/fs/cgroup" + group + "/cpu.max");
    if (!text.empty()) {
      any = true;
      const size_t cpus = cpus_from_cgroup_cpu_max(text);
      if (cpus != 0) tightest = tightest == 0 ? cpus : std::min(tightest, cpus);
    }
    if (group.empty() || group == "/") break;
    const size_t slash = group.rfind('/');
    group = slash == std::string::npos || slash == 0 ? std::string() : group.substr(0, slash);
  }
  if (any) return tightest;
  // cgroup v1 (older hosts): the quota and period in two files, -1 for no limit.
  for (const char* dir : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
    std::string quota = read_file(std::string(dir) + "/cpu.cfs_quota_us");
    const std::string period = read_file(std::string(dir) + "/cpu.cfs_period_us");
    if (quota.empty() || period.empty()) continue;
    while (!quota.empty() && quota.back() == '\n') quota.pop_back();
    return cpus_from_cgroup_cpu_max(quota + " " + period);
  }
  return 0;
}

CpuCounts probe() {
  CpuCounts counts;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const bool have_mask = sched_getaffinity(0, sizeof(allowed), &allowed) == 0;
  if (have_mask) counts.allowed_cpus = static_cast<size_t>(CPU_COUNT(&allowed));
  if (cpuinfo_initialize()) {
    std::set<const cpuinfo_core*> cores;
    for (uint32_t i = 0; i < cpuinfo_get_processors_count(); ++i) {
      const cpuinfo_processor* cpu = cpuinfo_get_processor(i);
      const int id = cpu->linux_id;
      const bool may_run = !have_mask || (id >= 0 && id < CPU_SETSIZE && CPU_ISSET(id, &allowed));
      if (may_run) cores.insert(cpu->core);
    }
    counts.physical_cores = cores.size();
  }
  counts.quota_cpus = probe_quota_cpus();
  return counts;
}

}  // namespace

const CpuCounts& probed_cpu_counts() {
  static const CpuCounts counts = probe();
  return counts;
}

size_t default_thread_count(const CpuCounts& counts) {
  size_t n = 0;
  for (size_t known : {counts.physical_cores, counts.allowed_cpus, counts.quota_cpus}) {
    if (known != 0) n = n == 0 ? known : std::min(n, known);
  }
  return std::max<size_t>(1, n);
}

size_t cpus_from_cgroup_cpu_max(std::string_view text) {
  unsigned long long quota = 0;
  unsigned long long period = 0;
  if (!take_number(text, quota)) return 0;  // "max": no limit
  if (text.empty() || text.front() != ' ') return 0;
  text.remove_prefix(1);
  if (!take_number(text, period) || period == 0) return 0;
  return static_cast<size_t>((quota + period - 1) / period);
}

}  // namespace et
