#include "server/core/vetting/vetting.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/cpu_count.h"
#include "runtime/core/data_file.h"
#include "runtime/core/method.h"
#include "runtime/core/program.h"
#include "runtime/core/sanitizers.h"
#include "runtime/core/thread_pool.h"
#include "server/core/vetting/sandbox.h"
#include "server/core/zero_run.h"

extern char** environ;

namespace et::server {
namespace {

// ---- The child ----------------------------------------------------------------------

constexpr int kProgramFd = 3, kDataFd = 4, kReportFd = 5;

void report(const std::string& line) {
  const std::string text = line + "\n";
  (void)!write(kReportFd, text.data(), text.size());
}

void set_limit(int resource, uint64_t value) {
  rlimit r{value, value};
  (void)setrlimit(resource, &r);
}

// Runs every method once on zeros of its declared inputs.
void exercise(const std::shared_ptr<const Program>& program, const VetLimits& limits) {
  for (const std::string& name : program->method_names()) {
    MethodOptions options;
    options.max_planned_bytes = limits.max_method_bytes;
    auto loaded = Method::load(program, name, options);
    if (!loaded.ok()) {
      report(fmt::format("method {}: load: {}", name, loaded.status().message()));
      continue;
    }
    ExecuteLimits run;
    run.deadline = std::chrono::steady_clock::now() + limits.execution_deadline;
    run.max_instructions = limits.max_instructions;
    const Status s = run_on_zeros(**loaded, run);
    report(fmt::format("method {}: {}", name, s.ok() ? "ran" : s.message()));
  }
}

}  // namespace

int vet_child_main(int argc, char** argv) {
  if (argc != 6) return 2;
  (void)prctl(PR_SET_PDEATHSIG, SIGKILL);  // the daemon gone, so is its vetting
  if (getppid() == 1) return 3;
  VetLimits limits;
  limits.max_method_bytes = std::strtoull(argv[2], nullptr, 10);
  limits.execution_deadline = std::chrono::milliseconds(std::strtoull(argv[3], nullptr, 10));
  limits.max_instructions = std::strtoull(argv[4], nullptr, 10);
  // What reads files or starts threads, done before the filter forbids it.
  ThreadPool::global().set_threads(1);
  (void)probed_cpu_counts();
  for (const auto& backend : BackendRegistry::global().all()) (void)backend->prepare();
  auto bytes = ProgramBytes::map_file("/proc/self/fd/3");
  if (!bytes.ok()) {
    report("cannot read the program: " + bytes.status().message());
    return 3;
  }
  std::shared_ptr<const ProgramBytes> data_bytes;
  if (std::string_view(argv[5]) == "data") {
    auto mapped = ProgramBytes::map_file("/proc/self/fd/4");
    if (!mapped.ok()) {
      report("cannot read the data file: " + mapped.status().message());
      return 3;
    }
    data_bytes = *mapped;
  }
  close(kProgramFd);
  close(kDataFd);
  const uint64_t mapped = (*bytes)->bytes().size() + (data_bytes ? data_bytes->bytes().size() : 0);
  // Address space: a method's planned memory and outputs, the program twice (mapped and
  // what loading copies), and 1 GiB for the runtime's own.
  if (!kSanitized) {
    // The method's memory, and as much again for the zeros fed to it and its outputs.
    set_limit(RLIMIT_AS, 2 * std::min<uint64_t>(limits.max_method_bytes, uint64_t{16} << 30) +
                             2 * mapped + (uint64_t{1} << 30));
  }
  const uint64_t seconds = static_cast<uint64_t>(limits.execution_deadline.count() / 1000) * 4 + 30;
  rlimit cpu{seconds, seconds + 5};  // SIGXCPU first, then SIGKILL
  (void)setrlimit(RLIMIT_CPU, &cpu);
  set_limit(RLIMIT_CORE, 0);
  set_limit(RLIMIT_FSIZE, 0);
  if (Status s = install_vetting_filter(); !s.ok()) {
    report(s.message());
    return 3;
  }
  // The filter holds: opening a file fails (the report says so; tests read it).
  const int probe = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  report(probe < 0 && errno == EPERM ? "sandbox: opening files refused" : "sandbox: NOT sandboxed");
  if (probe >= 0) close(probe);
  std::shared_ptr<const DataFile> data;
  if (data_bytes) {
    auto loaded = DataFile::load(data_bytes);
    if (!loaded.ok()) {
      report("data file: " + loaded.status().message());
      return 0;  // an error, which the daemon's own load will give too
    }
    data = *loaded;
  }
  auto program = Program::load(*bytes, data);
  if (!program.ok()) {
    report("load: " + program.status().message());
    return 0;
  }
  try {
    exercise(*program, limits);
  } catch (const std::exception& e) {  // the daemon catches these too: an error, not a crash
    report(fmt::format("exception: {}", e.what()));
  }
  report("done");
  return 0;
}

// ---- The daemon's side ------------------------------------------------------------------

namespace {

// A memfd holding `bytes`; -1 when it cannot be made.
int memfd_with(std::span<const uint8_t> bytes, const char* name) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  return fd;
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : fmt::format("signal {}", sig);
}

// Signals that come of the program itself, the same each time: remembered.
bool deterministic(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGSYS ||
         sig == SIGABRT;
}

// Descriptors that close with this scope.
struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  }
  int add(int fd) {
    fds.push_back(fd);
    return fd;
  }
};

// Reads a vetting child's two pipes: its report (kept whole, up to 64 KiB) and its
// stderr (the last 4 KiB kept).
struct ChildOutput {
  int report_fd, stderr_fd;
  std::string report, stderr_tail;

  bool open() const { return report_fd >= 0 || stderr_fd >= 0; }
  // Waits up to `ms` for either pipe; true when the report grew. A pipe at its end stops
  // being read (its descriptor is closed by the caller's Fds).
  bool read_for(int ms) {
    pollfd p[2] = {{report_fd, POLLIN, 0}, {stderr_fd, POLLIN, 0}};
    if (!open()) {
      (void)poll(nullptr, 0, std::min(ms, 10));
      return false;
    }
    if (poll(p, 2, ms) <= 0) return false;
    bool grew = false;
    char chunk[4096];
    if (p[0].revents != 0) {
      const ssize_t n = read(report_fd, chunk, sizeof(chunk));
      if (n <= 0) {
        report_fd = -1;
      } else if (report.size() < 65536) {
        report.append(chunk, static_cast<size_t>(n));
        grew = true;
      }
    }
    if (p[1].revents != 0) {
      const ssize_t n = read(stderr_fd, chunk, sizeof(chunk));
      if (n <= 0) {
        stderr_fd = -1;
      } else {
        stderr_tail.append(chunk, static_cast<size_t>(n));
        if (stderr_tail.size() > 4096) stderr_tail.erase(0, stderr_tail.size() - 4096);
      }
    }
    return grew;
  }
};

}  // namespace

Status Vetter::vet(std::span<const uint8_t> program, std::span<const uint8_t> data,
                   const std::string& sha256) {
  {
    MutexLock lock(mu_);
    if (refused_.count(sha256)) {
      return invalid_program(
          "vetting: this program crashed the sandboxed process it was tried in before; refused");
    }
  }
  // A few children at a time: each holds a core and memory while it runs.
  Slot slot(*this);
  if (!slot.held) {
    return unavailable(
        "vetting: every sandboxed child is busy trying other programs; try again shortly");
  }
  const auto started = std::chrono::steady_clock::now();
  Fds fds;
  // Above 10: dup2 onto 3, 4 and 5 in the child must not overwrite a source.
  auto high = [&fds](int fd) {
    if (fd < 0) return -1;
    const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    return fds.add(moved);
  };
  const int program_fd = high(memfd_with(program, "et-vet-program"));
  const int data_fd = data.empty() ? -1 : high(memfd_with(data, "et-vet-data"));
  // The child's report (its protocol), and its stderr: what a sanitizer or the runtime
  // says as it dies goes into the refusal's log line.
  int report_pipe[2] = {-1, -1}, stderr_pipe[2] = {-1, -1};
  for (int* p : {report_pipe, stderr_pipe}) {
    if (pipe2(p, O_CLOEXEC) == 0) {
      p[0] = fds.add(p[0]);
      p[1] = high(p[1]);
    }
  }
  if (program_fd < 0 || (!data.empty() && data_fd < 0) || report_pipe[0] < 0 ||
      report_pipe[1] < 0 || stderr_pipe[0] < 0 || stderr_pipe[1] < 0) {
    return internal_error(
        fmt::format("vetting: cannot hand the program to a child: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, stderr_pipe[1], 2);
  posix_spawn_file_actions_adddup2(&actions, program_fd, kProgramFd);
  if (data_fd >= 0) posix_spawn_file_actions_adddup2(&actions, data_fd, kDataFd);
  posix_spawn_file_actions_adddup2(&actions, report_pipe[1], kReportFd);
  const std::string method_bytes = std::to_string(limits_.max_method_bytes);
  const std::string deadline = std::to_string(limits_.execution_deadline.count());
  const std::string instructions = std::to_string(limits_.max_instructions);
  char* args[] = {daemon_.data(),
                  const_cast<char*>("--vet-child"),
                  const_cast<char*>(method_bytes.c_str()),
                  const_cast<char*>(deadline.c_str()),
                  const_cast<char*>(instructions.c_str()),
                  const_cast<char*>(data_fd >= 0 ? "data" : "none"),
                  nullptr};
  // One compute thread: no pool threads exist when the filter goes on.
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) {
    if (std::string_view(*e).rfind("ET_NUM_THREADS=", 0) != 0) env.push_back(*e);
  }
  env.push_back(const_cast<char*>("ET_NUM_THREADS=1"));
  env.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, daemon_.c_str(), &actions, nullptr, args, env.data());
  posix_spawn_file_actions_destroy(&actions);
  for (int write_end : {report_pipe[1], stderr_pipe[1]}) {
    close(write_end);
    fds.fds.erase(std::find(fds.fds.begin(), fds.fds.end(), write_end));
  }
  if (spawned != 0) {
    return internal_error(
        fmt::format("vetting: cannot start {}: {}", daemon_, std::strerror(spawned)));
  }
  // Its report, until the child has ended or its time is up: loading, plus each method's
  // load and execute (every line it reports gives it the time for one more).
  ChildOutput out{report_pipe[0], stderr_pipe[0], {}, {}};
  const auto per_step = limits_.execution_deadline + limits_.load_allowance;
  auto give_up = started + per_step;
  bool timed_out = false;
  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= give_up) {
      timed_out = true;
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    const int wait_ms = static_cast<int>(std::min<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(give_up - now).count(), 50));
    if (out.read_for(wait_ms)) give_up = std::chrono::steady_clock::now() + per_step;
  }
  // What the child wrote before it ended (a descendant holding the pipes gets a second).
  for (int i = 0; i < 20 && out.open(); ++i) (void)out.read_for(50);
  return verdict(sha256, out.report, status, timed_out, started, out.stderr_tail);
}

Status Vetter::verdict(const std::string& sha256, std::string reported, int status, bool timed_out,
                       std::chrono::steady_clock::time_point started, std::string stderr_tail) {
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  while (!reported.empty() && reported.back() == '\n') reported.pop_back();
  std::string why;
  bool remember = false;
  if (timed_out) {
    why = fmt::format(
        "its first load and execute made no progress for {:.1f} s",
        std::chrono::duration<double>(limits_.execution_deadline + limits_.load_allowance).count());
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    remember = deterministic(sig);
    why = fmt::format("the sandboxed process running its first load and execute was killed by {}{}",
                      signal_name(sig),
                      sig == SIGXCPU   ? " (its CPU time limit)"
                      : sig == SIGSYS  ? " (a system call the sandbox forbids)"
                      : sig == SIGKILL ? " (out of memory, or killed)"
                                       : " (it would have crashed the daemon)");
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    // The environment, not the program (no seccomp in this container, no /proc).
    return internal_error("vetting: the sandbox could not be set up: " + reported +
                          " (et-serverd --vet off turns vetting off)");
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    remember = true;
    why = fmt::format("the sandboxed process exited with status {}: {}", WEXITSTATUS(status),
                      reported.empty() ? "no report" : reported);
  } else if (!reported.ends_with("done") && reported.find("load: ") == std::string::npos &&
             reported.find("data file: ") == std::string::npos) {
    why = "the sandboxed process ended without finishing (" +
          (reported.empty() ? std::string("no report") : reported) + ")";
  }
  for (size_t at = 0; (at = reported.find('\n', at)) != std::string::npos;) {
    reported.replace(at, 1, "; ");  // one log line
  }
  if (why.empty()) {
    spdlog::debug("vetted program {} in {:.0f} ms: {}", sha256.substr(0, 12), ms, reported);
    return Status();
  }
  while (!stderr_tail.empty() && stderr_tail.back() == '\n') stderr_tail.pop_back();
  for (char& c : stderr_tail) {
    if (c == '\n') c = '|';  // one log line
  }
  spdlog::warn("refused program {} after vetting ({:.0f} ms): {}{}", sha256.substr(0, 12), ms, why,
               stderr_tail.empty() ? "" : "; the child's stderr: " + stderr_tail);
  if (remember) {
    MutexLock lock(mu_);
    if (refused_.size() < 4096) refused_.insert(sha256);
  }
  return invalid_program(
      "vetting: " + why +
      "; the program is refused (et-serverd tries a program it has not seen in a sandbox "
      "first, --vet). If it is a valid ExecuTorch program, please report it");
}

Vetter::Slot::Slot(Vetter& v) : vetter(v) {
  MutexLock lock(v.mu_);
  held = lock.wait_for(v.freed_, std::chrono::seconds(30),
                       [&v]() ET_REQUIRES(v.mu_) { return v.running_ < v.max_children_; });
  if (held) ++v.running_;
}

Vetter::Slot::~Slot() {
  if (!held) return;
  MutexLock lock(vetter.mu_);
  --vetter.running_;
  vetter.freed_.notify_one();
}

}  // namespace et::server
