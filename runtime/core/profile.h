// Profiles of executes: when Method::execute() is given an ExecuteProfile, it times
// every instruction that runs a kernel or a delegate, and a delegate times the steps
// it is made of (the XNNPACK backend: each run of nodes compiled into one XNNPACK
// runtime, and each node it runs with a kernel of its own). Without one nothing is
// timed: a profile costs nothing unless asked for.
//
// Times are steady-clock nanoseconds. ProfileSummary aggregates many executes for a
// table; etdump.h and chrome_trace.h write them for other tools.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace et {

struct ProfileEvent {
  enum class Kind : uint8_t {
    kOperator,      // a kernel instruction
    kDelegate,      // a delegate call, the whole of it
    kDelegateStep,  // a step inside a delegate call (after the call's own event)
  };
  Kind kind = Kind::kOperator;
  // kOperator: "aten::convolution.out"; kDelegate: the backend id ("XnnpackBackend");
  // kDelegateStep: what the step runs ("XNNPACK Convolution2D x3, Clamp").
  std::string name;
  uint32_t chain = 0;
  uint32_t instruction = 0;
  // kDelegateStep: the delegate's own id for the step (XNNPACK: its first node's id).
  int64_t debug_id = -1;
  // kOperator: the tensor arguments, "float32[1, 3, 224, 224], float32[32, 3, 3, 3]"
  // (inputs and outputs as the instruction lists them; non-tensors left out).
  std::string args;
  int64_t start_ns = 0;  // steady clock
  int64_t end_ns = 0;
};

// "operator", "delegate" or "delegate step".
const char* profile_event_kind_name(ProfileEvent::Kind kind);

// One execute of one method.
struct ExecuteProfile {
  // Events one execute keeps (a program that loops may run an instruction millions of
  // times); later ones are counted in dropped_events.
  static constexpr size_t kMostEvents = 1'000'000;
  std::string method;
  int64_t start_ns = 0;  // steady clock; 0 until the execute starts running
  int64_t end_ns = 0;
  std::vector<ProfileEvent> events;  // in the order they started
  uint64_t dropped_events = 0;
};

inline int64_t profile_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Where a delegate reports the steps of one call (current_delegate_profile()).
class DelegateProfile {
 public:
  DelegateProfile(ExecuteProfile& profile, uint32_t chain, uint32_t instruction)
      : profile_(profile), chain_(chain), instruction_(instruction) {}
  // Not thread-safe: report from the thread that runs the delegate call.
  void add_step(std::string name, int64_t debug_id, int64_t start_ns, int64_t end_ns) {
    if (profile_.events.size() >= ExecuteProfile::kMostEvents) {
      ++profile_.dropped_events;
      return;
    }
    ProfileEvent& e = profile_.events.emplace_back();
    e.kind = ProfileEvent::Kind::kDelegateStep;
    e.name = std::move(name);
    e.chain = chain_;
    e.instruction = instruction_;
    e.debug_id = debug_id;
    e.start_ns = start_ns;
    e.end_ns = end_ns;
  }

 private:
  ExecuteProfile& profile_;
  uint32_t chain_, instruction_;
};

// The delegate call being profiled on this thread, or nullptr: Method::execute() sets
// it for the length of each delegate call of a profiled execute (a thread-local, so
// that an unprofiled execute carries nothing for it), and the delegate reports its
// steps there.
DelegateProfile* current_delegate_profile();

// Sets current_delegate_profile() for its lifetime, then restores what was there.
class DelegateProfileScope {
 public:
  explicit DelegateProfileScope(DelegateProfile* profile);
  ~DelegateProfileScope();
  DelegateProfileScope(const DelegateProfileScope&) = delete;
  DelegateProfileScope& operator=(const DelegateProfileScope&) = delete;

 private:
  DelegateProfile* previous_;
};

// Many executes, aggregated by (kind, name, args) for a table.
struct ProfileRow {
  ProfileEvent::Kind kind = ProfileEvent::Kind::kOperator;
  std::string name;
  std::string args;
  uint64_t calls = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
};

struct ProfileSummary {
  uint64_t executes = 0;
  int64_t execute_ns = 0;        // all executes, end to end
  std::vector<ProfileRow> rows;  // by total time, largest first

  // Rows of operators and whole delegate calls (steps inside a call are counted in its
  // row and listed after it, marked as steps).
  static ProfileSummary of(const std::vector<ExecuteProfile>& profiles);
  // The table, one row per line: share of the executes' time, total, calls, mean, name
  // and arguments. Step rows are indented under their delegate's.
  std::string table(size_t max_rows = 0) const;
};

}  // namespace et
