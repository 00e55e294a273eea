// The real-time class: latency-critical threads (the daemon's fast-path channel threads
// and compute workers, a robot node's control loop) at a real-time scheduling policy,
// optionally pinned to CPUs of their own. A thread in it is never preempted by an
// ordinary busy process, so a wake-up reaches it at once; it never polls either (a
// real-time thread that polls keeps every ordinary thread off its CPU, perhaps the one
// it waits for). docs/operations.md, "Real-time class", says how to allow it.
// Header-only, like all of port/.
//
// Thread-safety: set_process_realtime_class() before the threads that read it start;
// everything else is safe from any thread.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace et {

struct RealtimeClass {
  int policy = SCHED_OTHER;  // SCHED_FIFO or SCHED_RR when on
  int priority = 0;          // 1..99 when on
  std::vector<int> cpus;     // the CPUs its threads may run on; empty: any

  bool on() const { return policy == SCHED_FIFO || policy == SCHED_RR; }
  // "SCHED_FIFO priority 10 on CPUs 2-3", "off".
  std::string describe() const;
};

// Parses "fifo:PRIO", "rr:PRIO", "fifo" or "rr" (priority 10), or "off" into `rt`
// (its cpus untouched). An empty string, or why the text is not one of those.
std::string parse_realtime_class(std::string_view text, RealtimeClass& rt);

// Parses a CPU list ("2", "2-3", "0,2-3") into `cpus`, checked against this process's
// allowed CPUs. An empty string, or why not (a CPU outside the allowed set is named).
std::string parse_cpu_list(std::string_view text, std::vector<int>& cpus);

// The class this process's latency-critical threads enter (off unless set).
const RealtimeClass& process_realtime_class();
void set_process_realtime_class(const RealtimeClass& rt);

// Puts the calling thread in `rt`: its CPUs, then its policy and priority (with
// SCHED_RESET_ON_FORK: threads and processes it starts later are ordinary). 0, or the
// errno of the call that failed (EPERM: not allowed; EINVAL: a CPU not allowed), and
// then the thread's policy is as it was.
int enter_realtime_class(const RealtimeClass& rt);

// Whether the calling thread entered a real-time class through enter_realtime_class().
bool this_thread_is_realtime();

// The one CPU the calling thread may run on, or -1 when it may run on several (or its
// affinity cannot be read). Looked up once per thread; enter_realtime_class() looks
// again (a thread that changes its own affinity otherwise keeps the first answer).
int this_thread_pinned_cpu();

// Whether a real-time thread pinned to `own_cpu` may poll for a counterpart that says
// it is pinned to `other_cpu_plus1` - 1 (0: not pinned, or not real-time, or unknown).
// Only when both are pinned to different CPUs: then the poll cannot keep the
// counterpart off its CPU, and it saves the wake-up (an inter-processor interrupt,
// tens of microseconds in a VM) that a sleep costs. It still keeps ordinary threads
// off `own_cpu` while it lasts, which is what that CPU was given to the class for.
bool realtime_polls_beside(int own_cpu, uint32_t other_cpu_plus1);

// Why `rt` was refused with `error` from enter_realtime_class(), and what allows it.
std::string realtime_refusal(const RealtimeClass& rt, int error);

// Definitions.

namespace realtime_detail {
inline thread_local bool this_thread_realtime = false;
inline thread_local int this_thread_cpu = -2;  // -2: not looked up yet
inline RealtimeClass& process_class() {
  static RealtimeClass rt;
  return rt;
}
inline std::string cpu_ranges(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}
inline std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}
}  // namespace realtime_detail

inline std::string RealtimeClass::describe() const {
  if (!on()) return "off";
  std::string out = policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR";
  out += " priority " + std::to_string(priority);
  if (!cpus.empty()) out += " on CPUs " + realtime_detail::cpu_ranges(cpus);
  return out;
}

inline std::string parse_realtime_class(std::string_view text, RealtimeClass& rt) {
  if (text == "off") {
    rt.policy = SCHED_OTHER;
    rt.priority = 0;
    return {};
  }
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  int policy = SCHED_OTHER;
  if (name == "fifo") policy = SCHED_FIFO;
  if (name == "rr") policy = SCHED_RR;
  if (policy == SCHED_OTHER) {
    return "'" + std::string(text) + "': give fifo[:PRIORITY], rr[:PRIORITY] or off";
  }
  int priority = 10;
  if (colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), priority);
    if (ec != std::errc() || end != digits.data() + digits.size() || priority < 1 ||
        priority > sched_get_priority_max(policy)) {
      return "'" + std::string(text) + "': the priority is a number from 1 to " +
             std::to_string(sched_get_priority_max(policy));
    }
  }
  rt.policy = policy;
  rt.priority = priority;
  return {};
}

inline std::string parse_cpu_list(std::string_view text, std::vector<int>& cpus) {
  std::vector<int> out;
  const std::vector<int> allowed = realtime_detail::allowed_cpus();
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t dash = part.find('-');
    int first = -1, last = -1;
    const std::string_view a = part.substr(0, dash);
    const std::string_view b = dash == std::string_view::npos ? a : part.substr(dash + 1);
    auto [end_a, ec_a] = std::from_chars(a.data(), a.data() + a.size(), first);
    auto [end_b, ec_b] = std::from_chars(b.data(), b.data() + b.size(), last);
    if (ec_a != std::errc() || ec_b != std::errc() || end_a != a.data() + a.size() ||
        end_b != b.data() + b.size() || first < 0 || last < first || last >= CPU_SETSIZE) {
      return "'" + std::string(part) + "' is not a CPU or a range of CPUs (e.g. 2 or 2-3)";
    }
    for (int c = first; c <= last; ++c) {
      bool ok = false;
      for (int a_cpu : allowed) ok = ok || a_cpu == c;
      if (!ok) {
        return "CPU " + std::to_string(c) + " is not in this process's allowed CPUs " +
               realtime_detail::cpu_ranges(allowed);
      }
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  if (out.empty()) return "give at least one CPU";
  cpus = out;
  return {};
}

inline const RealtimeClass& process_realtime_class() { return realtime_detail::process_class(); }
inline void set_process_realtime_class(const RealtimeClass& rt) {
  realtime_detail::process_class() = rt;
}

inline int enter_realtime_class(const RealtimeClass& rt) {
  // The CPUs first: a thread refused them stays as it was, not real-time unflagged.
  if (!rt.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : rt.cpus) CPU_SET(c, &set);
    if (const int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set); e != 0) return e;
  }
  sched_param param{};
  param.sched_priority = rt.on() ? rt.priority : 0;
  // pid 0 is the calling thread. SCHED_RESET_ON_FORK: threads and processes it starts
  // later (a gRPC thread, an auto-started daemon) are ordinary again, not real-time by
  // inheritance (they do inherit the CPUs).
  if (sched_setscheduler(0, (rt.on() ? rt.policy : SCHED_OTHER) | SCHED_RESET_ON_FORK, &param) !=
      0) {
    return errno;
  }
  realtime_detail::this_thread_realtime = rt.on();
  realtime_detail::this_thread_cpu = -2;
  return 0;
}

inline bool this_thread_is_realtime() { return realtime_detail::this_thread_realtime; }

inline int this_thread_pinned_cpu() {
  int& cpu = realtime_detail::this_thread_cpu;
  if (cpu == -2) {
    cpu_set_t set;
    cpu = -1;
    if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0 && CPU_COUNT(&set) == 1) {
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) cpu = c;
      }
    }
  }
  return cpu;
}

inline bool realtime_polls_beside(int own_cpu, uint32_t other_cpu_plus1) {
  return own_cpu >= 0 && other_cpu_plus1 != 0 &&
         other_cpu_plus1 != static_cast<uint32_t>(own_cpu) + 1;
}

inline std::string realtime_refusal(const RealtimeClass& rt, int error) {
  std::string out = "cannot run threads as " + rt.describe() + ": " + std::strerror(error);
  if (error == EPERM) {
    rlimit limit{};
    const bool have = getrlimit(RLIMIT_RTPRIO, &limit) == 0;
    out +=
        " (RLIMIT_RTPRIO is " +
        (have ? (limit.rlim_cur == RLIM_INFINITY ? std::string("unlimited")
                                                 : std::to_string(limit.rlim_cur))
              : std::string("unknown")) +
        " and the process lacks CAP_SYS_NICE. Allow it with `ulimit -r " +
        std::to_string(rt.priority) +
        "` in the shell that starts it, LimitRTPRIO=" + std::to_string(rt.priority) +
        " in a systemd unit, `--cap-add SYS_NICE --ulimit rtprio=" + std::to_string(rt.priority) +
        "` for a container, or `setcap cap_sys_nice+ep` on the binary; with "
        "CONFIG_RT_GROUP_SCHED the cgroup also needs cpu.rt_runtime_us above 0)";
  } else if (error == EINVAL && !rt.cpus.empty()) {
    out += " (CPUs " + realtime_detail::cpu_ranges(rt.cpus) +
           ": one is offline or outside the process's cpuset)";
  }
  return out;
}

}  // namespace et
