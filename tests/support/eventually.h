// Waiting for a condition rather than for a time: tests poll what they expect to
// become true, so a loaded machine only makes them slower, never wrong.
#pragma once

#include <chrono>
#include <thread>

namespace et::testing {

// How long a condition that should come is waited for before a test fails: only a
// backstop against hanging on a bug, far beyond any healthy wait (sanitizers, load).
inline constexpr std::chrono::seconds kBackstop{120};

// Polls `condition` until it returns true (then true) or `backstop` has passed (then
// false, after one last look).
template <typename Condition>
bool eventually(Condition&& condition, std::chrono::milliseconds backstop = kBackstop) {
  const auto deadline = std::chrono::steady_clock::now() + backstop;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace et::testing
