// handoff-floor: the least a call from one process to another can cost on this
// machine, with no daemon, protocol or model: two processes hand a counter back and
// forth through a futex in shared memory, the caller at a fixed rate (as robot_node
// calls), the server answering at once. Beside busy processes its tail is the
// scheduler's, not ours: the contention scenario (benchmarks/suite/contention.py)
// sets it beside the fast path as the floor of any design that crosses a process
// boundary at an ordinary priority.
//
// Usage: handoff-floor [--hz N] [--seconds S]   (defaults 1000 and 5)
// Prints one JSON object: calls, p50_us, p99_us, max_us.
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace {

struct Shared {
  std::atomic<uint32_t> request{0};
  std::atomic<uint32_t> response{0};
};

constexpr uint32_t kStop = 0xffffffffu;

int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

void wait_while(std::atomic<uint32_t>& word, uint32_t value) {
  while (word.load(std::memory_order_acquire) == value) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, value, nullptr, nullptr, 0);
  }
}

void wake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

[[noreturn]] void serve(Shared& s) {
  uint32_t last = 0;
  for (;;) {
    wait_while(s.request, last);
    last = s.request.load(std::memory_order_acquire);
    if (last == kStop) _exit(0);
    s.response.store(last, std::memory_order_release);
    wake(s.response);
  }
}

double percentile_us(const std::vector<int64_t>& sorted, double q) {
  const size_t at = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
  return static_cast<double>(sorted[at]) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  double hz = 1000, seconds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--hz") == 0) {
      hz = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--seconds") == 0) {
      seconds = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "handoff-floor: unknown flag %s (give --hz N --seconds S)\n", argv[i]);
      return 2;
    }
  }
  if (hz <= 0 || seconds <= 0 || (argc - 1) % 2 != 0) {
    std::fprintf(stderr, "handoff-floor: give --hz N and --seconds S, both above 0\n");
    return 2;
  }
  void* memory =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    std::perror("handoff-floor: mmap");
    return 1;
  }
  auto* shared = new (memory) Shared;
  const pid_t server = fork();
  if (server < 0) {
    std::perror("handoff-floor: fork");
    return 1;
  }
  if (server == 0) serve(*shared);

  const auto calls = static_cast<size_t>(hz * seconds);
  const auto period_ns = static_cast<int64_t>(1e9 / hz);
  std::vector<int64_t> took(calls);
  int64_t due = now_ns();
  for (size_t i = 0; i < calls; ++i) {
    const auto seq = static_cast<uint32_t>(i + 1);
    const int64_t start = now_ns();
    shared->request.store(seq, std::memory_order_release);
    wake(shared->request);
    while (shared->response.load(std::memory_order_acquire) != seq) {
      wait_while(shared->response, seq - 1);
    }
    took[i] = now_ns() - start;
    due += period_ns;
    const timespec at{static_cast<time_t>(due / 1'000'000'000),
                      static_cast<long>(due % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
  }
  shared->request.store(kStop, std::memory_order_release);
  wake(shared->request);
  waitpid(server, nullptr, 0);
  std::sort(took.begin(), took.end());
  std::printf("{\"calls\": %zu, \"p50_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f}\n", calls,
              percentile_us(took, 0.5), percentile_us(took, 0.99), percentile_us(took, 1.0));
  return 0;
}
