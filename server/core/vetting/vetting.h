// --vet: a program the daemon has never seen, sent by a client, is first loaded and
// executed (every method, once, on zeros of its declared inputs) in a child process
// that is sandboxed: resource limits (address space, CPU time, no files written, no
// core) and a seccomp filter that denies everything a parser or kernel does not need
// (no files opened, no sockets, no processes, no signals to others). A program that
// passes verification and still crashes a kernel, or runs away with memory, kills
// only that child: the daemon refuses the program with an error naming what happened,
// and goes on. Errors the program's methods return are not refusals: the daemon
// returns the same errors to whoever calls them.
//
// Thread-safety: vet() may be called from any thread (posix_spawn: no fork of the
// daemon's threads).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>

#include "port/mutex.h"
#include "runtime/core/status.h"

namespace et::server {

struct VetLimits {
  uint64_t max_method_bytes = uint64_t{8} << 30;         // as the daemon's --max-method-bytes
  std::chrono::milliseconds execution_deadline{60'000};  // per execute
  uint64_t max_instructions = 100'000'000;               // per execute
  // Time the child may go without reporting progress: execution_deadline plus this
  // (it reports once loaded and after each method).
  std::chrono::milliseconds load_allowance{60'000};
};

class Vetter {
 public:
  // `daemon` is the et-serverd binary to run as the child (/proc/self/exe).
  Vetter(std::string daemon, VetLimits limits) : daemon_(std::move(daemon)), limits_(limits) {}

  // Ok when the sandboxed first load and execute of `program` (with its .ptd `data`,
  // maybe empty) ended without crashing or being killed. InvalidProgram naming the
  // signal, limit or timeout otherwise; Internal when no child could be started or the
  // sandbox could not be set up.
  // Unavailable when every child slot stayed busy for 30 s.
  Status vet(std::span<const uint8_t> program, std::span<const uint8_t> data,
             const std::string& sha256);

 private:
  // One of max_children_ children running at once, waited for up to 30 s.
  struct Slot {
    explicit Slot(Vetter& v);
    ~Slot();
    Vetter& vetter;
    bool held = false;
  };
  // The outcome of a child: its report, wait status, and whether it was killed on time.
  // `stderr_tail`: the end of what the child wrote to stderr, for the refusal's log line.
  Status verdict(const std::string& sha256, std::string reported, int status, bool timed_out,
                 std::chrono::steady_clock::time_point started, std::string stderr_tail);

  std::string daemon_;
  VetLimits limits_;
  const size_t max_children_ = std::max(1u, std::thread::hardware_concurrency() / 2);
  Mutex mu_;
  std::condition_variable freed_;
  size_t running_ ET_GUARDED_BY(mu_) = 0;
  // Hashes of programs whose child died of a signal that comes of the program itself
  // (SIGSEGV and the like): refused at once when sent again. Timeouts, out-of-memory
  // kills and a sandbox that cannot be set up are not remembered.
  std::set<std::string> refused_ ET_GUARDED_BY(mu_);
};

// The child's side: `et-serverd --vet-child MAX_METHOD_BYTES DEADLINE_MS MAX_INSTRUCTIONS
// data|none`, the program on descriptor 3, its .ptd on 4 (with "data"), a report
// written to 5.
// Returns the exit status.
int vet_child_main(int argc, char** argv);

}  // namespace et::server
