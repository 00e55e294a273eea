#include "server/core/vetting/sandbox.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace et::server {
namespace {

// Runs `body` in a forked child under the filter (`body` runs after it is installed)
// and returns the child's wait status; the child exits 0 when `body` returns true.
template <typename Body>
int under_filter(Body body) {
  const pid_t child = fork();
  if (child == 0) {
    if (!install_vetting_filter().ok()) _exit(90);
    _exit(body() ? 0 : 1);
  }
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  return status;
}

// A thread created just before the filter goes on most often runs its first
// instruction after it (it waits for a core; the creating thread goes on): glibc
// registers its restartable-sequence area then. ASan's RSS-limit thread, started by a
// global constructor, met this in the vetting child on a loaded machine.
TEST(VettingFilter, AThreadStartingAsTheFilterGoesOnRuns) {
  for (int i = 0; i < 5; ++i) {
    const pid_t child = fork();
    if (child == 0) {
      std::atomic<bool> ran{false};
      std::thread late([&ran] { ran = true; });
      if (!install_vetting_filter().ok()) _exit(90);
      late.join();
      _exit(ran ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    ASSERT_EQ(WEXITSTATUS(status), 0);
  }
}

// abort() signals the process itself: it ends by SIGABRT (a denied tgkill left glibc to
// crash: SIGSEGV, which says nothing of why).
TEST(VettingFilter, AbortEndsByItsOwnSignal) {
  const int status = under_filter([] {
    std::abort();
    return false;
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
}

TEST(VettingFilter, NoFilesSocketsProcessesOrSignalsToOthers) {
  const pid_t parent = getpid();
  const int status = under_filter([parent] {
    auto refused = [](long result) { return result == -1 && errno == EPERM; };
    return refused(open("/proc/self/status", O_RDONLY)) &&
           refused(socket(AF_UNIX, SOCK_STREAM, 0)) && refused(fork()) &&
           refused(kill(parent, 0)) && refused(syscall(SYS_tgkill, parent, parent, 0)) &&
           refused(syscall(SYS_tgkill, long{getpid()} | (long{1} << 32), gettid(), 0)) &&
           // Its own: to itself, and writing what it has.
           syscall(SYS_tgkill, getpid(), gettid(), 0) == 0 && write(2, "", 0) == 0;
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace et::server
