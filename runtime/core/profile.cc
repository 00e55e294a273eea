#include "runtime/core/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace et {
namespace {

using RowKey = std::tuple<int, std::string, std::string>;  // kind, name, args

RowKey key_of(const ProfileEvent& e) {
  return {static_cast<int>(e.kind), e.name,
          e.kind == ProfileEvent::Kind::kDelegateStep ? fmt::format("{}", e.debug_id) : e.args};
}

void add(ProfileRow& row, int64_t ns) {
  row.min_ns = row.calls == 0 ? ns : std::min(row.min_ns, ns);
  row.max_ns = row.calls == 0 ? ns : std::max(row.max_ns, ns);
  row.total_ns += ns;
  ++row.calls;
}

std::string duration(int64_t ns) {
  if (ns >= 1'000'000'000) return fmt::format("{:.2f} s", static_cast<double>(ns) / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:.2f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
}

// Rows that are steps of a delegate call are kept apart, by their delegate's row.
struct Aggregate {
  std::map<RowKey, ProfileRow> top;
  std::map<RowKey, std::map<RowKey, ProfileRow>> steps;  // delegate row -> its steps
};

}  // namespace

namespace {
thread_local DelegateProfile* current_profile = nullptr;
}  // namespace

DelegateProfile* current_delegate_profile() { return current_profile; }

DelegateProfileScope::DelegateProfileScope(DelegateProfile* profile) : previous_(current_profile) {
  current_profile = profile;
}

DelegateProfileScope::~DelegateProfileScope() { current_profile = previous_; }

const char* profile_event_kind_name(ProfileEvent::Kind kind) {
  switch (kind) {
    case ProfileEvent::Kind::kOperator:
      return "operator";
    case ProfileEvent::Kind::kDelegate:
      return "delegate";
    default:
      return "delegate step";
  }
}

ProfileSummary ProfileSummary::of(const std::vector<ExecuteProfile>& profiles) {
  ProfileSummary summary;
  Aggregate agg;
  for (const ExecuteProfile& p : profiles) {
    ++summary.executes;
    summary.execute_ns += p.end_ns - p.start_ns;
    std::map<std::pair<uint32_t, uint32_t>, RowKey> delegate_at;  // (chain, instruction)
    for (const ProfileEvent& e : p.events) {
      const RowKey key = key_of(e);
      ProfileRow* row = nullptr;
      if (e.kind == ProfileEvent::Kind::kDelegateStep) {
        auto parent = delegate_at.find({e.chain, e.instruction});
        if (parent == delegate_at.end()) continue;  // a step outside any call: ignored
        row = &agg.steps[parent->second][key];
      } else {
        if (e.kind == ProfileEvent::Kind::kDelegate) delegate_at[{e.chain, e.instruction}] = key;
        row = &agg.top[key];
      }
      row->kind = e.kind;
      row->name = e.name;
      row->args = std::get<2>(key);
      add(*row, e.end_ns - e.start_ns);
    }
  }
  auto by_total = [](const ProfileRow& a, const ProfileRow& b) { return a.total_ns > b.total_ns; };
  std::vector<std::pair<RowKey, ProfileRow>> top(agg.top.begin(), agg.top.end());
  std::sort(top.begin(), top.end(),
            [&](const auto& a, const auto& b) { return by_total(a.second, b.second); });
  for (auto& [key, row] : top) {
    summary.rows.push_back(row);
    auto steps = agg.steps.find(key);
    if (steps == agg.steps.end()) continue;
    std::vector<ProfileRow> sorted;
    for (auto& [k, r] : steps->second) sorted.push_back(r);
    std::sort(sorted.begin(), sorted.end(), by_total);
    summary.rows.insert(summary.rows.end(), sorted.begin(), sorted.end());
  }
  return summary;
}

std::string ProfileSummary::table(size_t max_rows) const {
  std::string out =
      fmt::format("{} execute(s), {} each on average\n", executes,
                  duration(executes == 0 ? 0 : execute_ns / static_cast<int64_t>(executes)));
  auto share = [&](int64_t ns) {
    return execute_ns == 0 ? 0.0
                           : 100.0 * static_cast<double>(ns) / static_cast<double>(execute_ns);
  };
  auto line = [&](int64_t total, uint64_t calls, const std::string& what) {
    return fmt::format("{:>6.1f}% {:>10} {:>7} {:>10}  {}\n", share(total), duration(total), calls,
                       duration(total / static_cast<int64_t>(calls)), what);
  };
  out += fmt::format("{:>7} {:>10} {:>7} {:>10}  {}\n", "share", "total", "calls", "mean",
                     "operator / delegate call (args)");
  size_t shown = 0;
  // Operators and delegates whatever their arguments: where the time goes, in short.
  std::map<std::string, std::pair<int64_t, uint64_t>> by_name;
  for (const ProfileRow& row : rows) {
    if (row.kind == ProfileEvent::Kind::kDelegateStep) continue;
    by_name[row.name].first += row.total_ns;
    by_name[row.name].second += row.calls;
  }
  for (const ProfileRow& row : rows) {
    const bool step = row.kind == ProfileEvent::Kind::kDelegateStep;
    if (!step && max_rows != 0 && shown++ >= max_rows) break;
    std::string what = step ? fmt::format("  step at node {}: {}", row.args, row.name) : row.name;
    if (!step && !row.args.empty()) what += fmt::format("  ({})", row.args);
    out += line(row.total_ns, row.calls, what);
  }
  const auto top_rows =
      static_cast<size_t>(std::count_if(rows.begin(), rows.end(), [](const ProfileRow& r) {
        return r.kind != ProfileEvent::Kind::kDelegateStep;
      }));
  if (by_name.size() < top_rows) {
    std::vector<std::pair<std::string, std::pair<int64_t, uint64_t>>> sorted(by_name.begin(),
                                                                             by_name.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
    out += "by operator / delegate, all arguments together:\n";
    for (const auto& [name, total] : sorted) out += line(total.first, total.second, name);
  }
  return out;
}

}  // namespace et
