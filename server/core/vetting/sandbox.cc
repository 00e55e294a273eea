#include "server/core/vetting/sandbox.h"

#include <fmt/format.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace et::server {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kAuditArch = 0;  // no filter: limits only
#endif
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "a 64-bit argument's low word comes first");

// What loading and executing a program needs once everything that reads files (cpuinfo,
// XNNPACK's initialisation) has run: memory, time, the descriptors it has, ending.
constexpr long kAllowedCalls[] = {
    SYS_read,
    SYS_write,
    SYS_writev,
    SYS_pread64,
    SYS_mmap,
    SYS_munmap,
    SYS_mremap,
    SYS_mprotect,
    SYS_madvise,
    SYS_brk,
    SYS_futex,
    SYS_exit,
    SYS_exit_group,
    SYS_rt_sigreturn,
    SYS_rt_sigprocmask,
    SYS_clock_gettime,
    SYS_clock_nanosleep,
    SYS_nanosleep,
    SYS_gettimeofday,
    SYS_getrandom,
    SYS_sched_yield,
    SYS_sched_getaffinity,
    SYS_getpid,
    SYS_gettid,
    SYS_close,
    SYS_fstat,
    SYS_lseek,
    // A thread starting or ending (glibc): its restartable-sequence area and robust
    // futex list, each the calling thread's own. Denied, a thread scheduled only after
    // the filter went on dies in glibc ("rseq registration failed", then SIGSEGV).
    SYS_set_robust_list,
#ifdef SYS_rseq
    SYS_rseq,
#endif
    // Sanitizer runtimes: a pipe of their own (to probe whether memory is readable),
    // signal stacks and handlers, their stack's limit, the process's peak RSS (ASan's
    // hard_rss_limit_mb when /proc cannot be opened).
    SYS_pipe2,
    SYS_sigaltstack,
    SYS_rt_sigaction,
    SYS_prlimit64,
    SYS_getrusage,
#ifdef SYS_getrlimit
    SYS_getrlimit,
#endif
#ifdef SYS_pipe
    SYS_pipe,
#endif
#ifdef SYS_newfstatat
    SYS_newfstatat,
#endif
};

}  // namespace

Status install_vetting_filter() {
  if (kAuditArch == 0) return Status();
  constexpr uint32_t kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  constexpr uint32_t kArg0 = offsetof(seccomp_data, args);
  const auto self = static_cast<uint32_t>(getpid());
  std::vector<sock_filter> prog;
  // Another architecture's calls (x32, 32-bit) are refused outright.
  prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
  prog.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));  // x32 ABI
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
  for (long nr : kAllowedCalls) {
    prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1));
    prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  // tgkill to this process only (abort() and raise() signal the caller's own thread):
  // its first argument, all 64 bits, is this process's id.
  prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 0, 5));
  prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0));
  prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 3));
  prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0 + 4));
  prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1));
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, kDeny));
  sock_fprog fprog{static_cast<unsigned short>(prog.size()), prog.data()};
  // TSYNC: every thread of the process gets the filter (a sanitizer's, or a pool's
  // thread started before), or none does and this fails.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog) != 0) {
    return internal_error(fmt::format("seccomp: {}", std::strerror(errno)));
  }
  return Status();
}

}  // namespace et::server
