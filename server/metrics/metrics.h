// The daemon's metrics (docs/operations.md): calls by model, method, transport and
// status code, with latency histograms, kept in atomics on the calls' threads, and the
// gauges read when the page is asked for; written in Prometheus' text format (0.0.4).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "port/mutex.h"

namespace et::server::metrics {

enum class Transport : uint8_t { kGrpc, kFastPath, kKServeGrpc, kKServeHttp };
inline constexpr size_t kTransports = 4;
std::string_view transport_name(Transport t);

// Seconds, observed in nanoseconds: buckets from 1 µs to 10 s.
class Histogram {
 public:
  static constexpr std::array<uint64_t, 22> kBoundsNs{
      1'000,         2'500,         5'000,         10'000,        25'000,      50'000,
      100'000,       250'000,       500'000,       1'000'000,     2'500'000,   5'000'000,
      10'000'000,    25'000'000,    50'000'000,    100'000'000,   250'000'000, 500'000'000,
      1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
  void observe(uint64_t ns);
  // Appends NAME_bucket{LABELS,le=...}, NAME_sum and NAME_count lines.
  void write(std::string& out, std::string_view name, std::string_view labels) const;

 private:
  std::array<std::atomic<uint64_t>, kBoundsNs.size() + 1> counts_{};  // the last: +Inf only
  std::atomic<uint64_t> sum_ns_{0};
};

// The calls of one method of one model over one transport.
struct CallSeries {
  std::string labels;                               // model="...",method="...",transport="..."
  std::array<std::atomic<uint64_t>, 17> by_code{};  // by gRPC status code
  Histogram queue, compute, round_trip;
  std::atomic<uint64_t> deadline_misses{0};  // calls longer than their caller's deadline
};

// Label values as the text format writes them (backslash, quote and newline escaped).
std::string escape_label(std::string_view value);
// Appends a gauge or counter's HELP, TYPE and one sample.
void write_metric(std::string& out, std::string_view name, std::string_view type,
                  std::string_view help, double value);

class Metrics {
 public:
  // At most `max_series` (model, method, transport) series; calls past that are counted
  // under model "_other" (clients' programs must not grow the page without bound).
  explicit Metrics(size_t max_series = 2000) : max_series_(max_series) {}

  // The series of `model`'s `method` over `transport`, made on first use; never null,
  // valid as long as this object.
  CallSeries* series(const std::string& model, const std::string& method, Transport transport);

  // A writer of metrics read at scrape time (gauges: sessions, memory, ...), called in
  // the order added. REQUIRES: before render() runs on another thread.
  using Collector = std::function<void(std::string& out)>;
  void add_collector(Collector c);

  // The whole page.
  std::string render() const;

 private:
  const size_t max_series_;
  mutable Mutex mu_;
  std::map<std::tuple<std::string, std::string, Transport>, std::unique_ptr<CallSeries>> series_
      ET_GUARDED_BY(mu_);
  std::vector<Collector> collectors_;
};

}  // namespace et::server::metrics
