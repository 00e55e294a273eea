// Whether a thread that waits may spin: spinning pays only while the machine has a CPU
// to spare. When more threads are runnable than there are CPUs, a spinning thread keeps
// one of them (maybe the very thread it waits for) off a CPU until the scheduler's next
// tick, milliseconds later; blocking in the kernel lets it run at once, and the wake-up
// it then sends is served by wake-up preemption. Shared by the daemon and its clients
// (docs/fast_path.md, "Waiting") and the runtime's thread pool. Header-only, like
// all of port/; depends on nothing else in the project.
//
// Thread-safety: every member is safe to call from any thread.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>
#include <system_error>
#include <utility>

namespace et {

class CpuLoad {
 public:
  // How often the machine is looked at (at most), how many of the last looks decide,
  // and how many of those must have seen it over.
  static constexpr std::chrono::milliseconds kLookEvery{1};
  static constexpr int kLooks = 8;
  static constexpr int kOverToSaturate = 4;

  // Looks at the machine through `runnable` (threads runnable now, the caller included;
  // negative when unknown) against `cpus` CPUs.
  CpuLoad(std::function<int()> runnable, int cpus);

  // The process's instance: /proc/loadavg's count of runnable threads against the
  // online CPUs (both machine-wide, as the scheduler sees them). Where /proc cannot be
  // read (a sandbox), never saturated.
  static CpuLoad& process();

  // An instance that never reports saturation: for a real-time thread whose poll
  // cannot take a CPU from the thread it waits for (port/realtime.h).
  static CpuLoad& never_saturated();

  // True when spinning would take a CPU from a runnable thread: at least
  // kOverToSaturate of the last kLooks looks saw more threads runnable than CPUs (a
  // kernel worker or a timer that ran for a moment is one look, not saturation; a busy
  // process is every look). Looks again when the last look is kLookEvery old (one
  // pread of /proc/loadavg).
  bool saturated();

  // Makes the next saturated() look at the machine whenever it comes (tests).
  void force_look_for_testing() { next_look_ns_.store(0, std::memory_order_relaxed); }

  // The runnable count in /proc/loadavg's text ("0.52 0.58 0.59 3/211 4511": 3); -1
  // when the text is not of that form.
  static int runnable_in(std::string_view loadavg);

 private:
  static int64_t now_ns();

  std::function<int()> runnable_;
  int cpus_;
  std::atomic<int64_t> next_look_ns_{0};
  std::atomic<uint32_t> history_{0};  // bit i: look i ago was over
  std::atomic<bool> saturated_{false};
};

// What one bounded spin ended with.
enum class SpinEnd { kDone, kTimeUp, kSaturated };

// Polls `done` until it is true, `limit` has passed, or `load` reports saturation
// (checked every 64 polls, with the clock). Each poll is a
// pause instruction, and every 16th a sched_yield(): on a machine with CPUs to spare, a
// yield returns at once, or hands this CPU to the thread being waited for when the
// scheduler put it here. On a saturated machine a yield would hand the CPU to a busy
// process for a whole time slice: there the spin ends and the caller sleeps instead.
template <class Done>
SpinEnd spin_until(Done&& done, std::chrono::nanoseconds limit, CpuLoad& load) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (uint32_t n = 1;; ++n) {
    if (done()) return SpinEnd::kDone;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");  // a hint to the core, not sched_yield
#endif
    if ((n & 15) != 0) continue;
    if ((n & 63) == 0) {
      if (Clock::now() - start >= limit) return SpinEnd::kTimeUp;
      if (load.saturated()) return SpinEnd::kSaturated;
    }
    sched_yield();
  }
}

// Definitions.

inline CpuLoad::CpuLoad(std::function<int()> runnable, int cpus)
    : runnable_(std::move(runnable)), cpus_(cpus > 0 ? cpus : 1) {}

inline CpuLoad& CpuLoad::process() {
  static CpuLoad* load = [] {
    const int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    auto runnable = [fd]() -> int {
      if (fd < 0) return -1;
      char text[128];
      const ssize_t n = pread(fd, text, sizeof text, 0);
      return n > 0 ? runnable_in(std::string_view(text, static_cast<size_t>(n))) : -1;
    };
    return new CpuLoad(runnable, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  }();
  return *load;
}

inline CpuLoad& CpuLoad::never_saturated() {
  static CpuLoad* load = new CpuLoad(nullptr, 1);
  return *load;
}

inline int64_t CpuLoad::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline bool CpuLoad::saturated() {
  const int64_t now = now_ns();
  int64_t due = next_look_ns_.load(std::memory_order_relaxed);
  // One thread looks; the others use the last look.
  if (now >= due &&
      next_look_ns_.compare_exchange_strong(due, now + std::chrono::nanoseconds(kLookEvery).count(),
                                            std::memory_order_relaxed)) {
    // Only the thread that won the exchange writes history_ until the next look is due;
    // looks are kLookEvery apart, so two never overlap in practice (and a torn history
    // would only misjudge one look).
    const bool over = runnable_ && runnable_() > cpus_;
    const uint32_t h =
        ((history_.load(std::memory_order_relaxed) << 1) | (over ? 1u : 0u)) & ((1u << kLooks) - 1);
    history_.store(h, std::memory_order_relaxed);
    saturated_.store(__builtin_popcount(h) >= kOverToSaturate, std::memory_order_relaxed);
  }
  return saturated_.load(std::memory_order_relaxed);
}

inline int CpuLoad::runnable_in(std::string_view loadavg) {
  // Three averages, then "runnable/threads".
  size_t at = 0;
  for (int field = 0; field < 3; ++field) {
    at = loadavg.find(' ', at);
    if (at == std::string_view::npos) return -1;
    ++at;
  }
  int runnable = -1;
  const char* first = loadavg.data() + at;
  const char* last = loadavg.data() + loadavg.size();
  const auto [end, error] = std::from_chars(first, last, runnable);
  if (error != std::errc() || end == first || end == last || *end != '/') return -1;
  return runnable;
}

}  // namespace et
