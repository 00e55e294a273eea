// Taking the profiles StartProfile began (it is a call: a HoldWork setting
// slot.profiling).
#include <fmt/format.h>

#include <algorithm>

#include "server/core/core.h"
#include "server/core/core_internal.h"

namespace et::server {

Result<std::unique_ptr<MethodSlot::Profiling>> Core::take_profiles(
    const std::string& token, std::span<const uint64_t> handles, bool for_etdump) {
  if (handles.empty()) return invalid_argument("method_handle: name the methods to stop profiling");
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  std::vector<std::shared_ptr<MethodSlot>> slots;
  for (uint64_t handle : handles) {
    ET_ASSIGN_OR_RETURN(std::shared_ptr<MethodSlot> slot, method_for(*s, handle));
    if (std::find(slots.begin(), slots.end(), slot) != slots.end()) {
      return invalid_argument(fmt::format("method_handle {} is named twice", handle));
    }
    slots.push_back(std::move(slot));
  }
  uint64_t queued_ns = 0;  // not a call of its own: not timed
  // An ETDump holds at most 10,000,000 events: a merge that would exceed it takes none.
  if (for_etdump && slots.size() > 1) {
    uint64_t events = 0;
    for (const auto& slot : slots) {
      ET_RETURN_IF_ERROR(hold(*slot, queued_ns, [&] {
        if (slot->profiling) events += slot->profiling->events;
        return Status();
      }));
    }
    constexpr uint64_t kMostEtdumpEvents = 10'000'000;
    if (events > kMostEtdumpEvents) {
      return resource_exhausted(fmt::format(
          "the {} profiles hold {} events; one ETDump holds at most {}: stop them separately "
          "or profile fewer executes",
          slots.size(), events, kMostEtdumpEvents));
    }
  }
  // Every profile is taken, or (when one is not running) none.
  std::vector<std::unique_ptr<MethodSlot::Profiling>> taken(slots.size());
  Status st;
  for (size_t i = 0; i < slots.size() && st.ok(); ++i) {
    st = hold(*slots[i], queued_ns, [&] {
      taken[i] = std::move(slots[i]->profiling);
      return Status();
    });
    if (st.ok() && taken[i] == nullptr) {
      st = failed_precondition(fmt::format(
          "method_handle {} is not being profiled: call StartProfile first", handles[i]));
    }
  }
  if (!st.ok()) {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (taken[i] == nullptr) continue;
      (void)hold(*slots[i], queued_ns, [&] {
        if (slots[i]->profiling == nullptr) slots[i]->profiling = std::move(taken[i]);
        return Status();
      });
    }
    return st;
  }
  std::unique_ptr<MethodSlot::Profiling> profiling = std::move(taken[0]);
  for (size_t i = 1; i < taken.size(); ++i) {
    for (ExecuteProfile& e : taken[i]->executes) profiling->executes.push_back(std::move(e));
    profiling->dropped += taken[i]->dropped;
  }
  return profiling;
}

}  // namespace et::server
