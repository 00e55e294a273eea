// What the core's files share and nothing outside server/core/ uses.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <utility>

#include "server/core/core.h"

namespace et::server {

inline Status shutting_down_error() {
  return unavailable("the daemon is shutting down; reconnect to its successor");
}

inline Status unknown_program(uint64_t id) {
  return not_found(fmt::format("program_id {} is not one of this session's programs", id));
}

// Counts a call of a session while it runs (waits included): at --max-calls, the next
// is refused.
class Core::CallCount {
 public:
  static Result<CallCount> start(const Core& core, Session& s) {
    if (s.calls_running.fetch_add(1) >= core.limits_.max_calls_per_session) {
      --s.calls_running;
      return resource_exhausted(fmt::format(
          "this session has {} calls running or waiting, its limit (--max-calls); wait for "
          "one to finish",
          core.limits_.max_calls_per_session));
    }
    return CallCount(s);
  }
  CallCount(CallCount&& other) noexcept : s_(std::exchange(other.s_, nullptr)) {}
  CallCount(const CallCount&) = delete;
  CallCount& operator=(const CallCount&) = delete;
  CallCount& operator=(CallCount&&) = delete;
  ~CallCount() {
    if (s_) --s_->calls_running;
  }

 private:
  explicit CallCount(Session& s) : s_(&s) {}
  Session* s_;
};

}  // namespace et::server
