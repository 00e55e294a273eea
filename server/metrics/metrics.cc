#include "server/metrics/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "server/common/utf8.h"

namespace et::server::metrics {
namespace {

constexpr std::array<std::string_view, 17> kCodeNames{
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

std::string seconds(uint64_t ns) { return fmt::format("{}", static_cast<double>(ns) / 1e9); }

}  // namespace

std::string_view transport_name(Transport t) {
  switch (t) {
    case Transport::kGrpc:
      return "grpc";
    case Transport::kFastPath:
      return "fast_path";
    case Transport::kKServeGrpc:
      return "kserve_grpc";
    case Transport::kKServeHttp:
      return "kserve_http";
  }
  return "?";
}

std::string escape_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size();) {
    const char c = value[i];
    const size_t n = utf8_sequence_length(value, i);
    if (n == 0) {
      // Not UTF-8, which the format requires (one bad value would make the whole page
      // unreadable): the byte is written as the text \xNN.
      out += fmt::format("\\\\x{:02x}", static_cast<unsigned char>(c));
      ++i;
      continue;
    }
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.append(value.substr(i, n));
    }
    i += n;
  }
  return out;
}

void write_metric(std::string& out, std::string_view name, std::string_view type,
                  std::string_view help, double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name,
                     std::isfinite(value) ? fmt::format("{}", value) : std::string("NaN"));
}

void Histogram::observe(uint64_t ns) {
  const size_t i = static_cast<size_t>(std::lower_bound(kBoundsNs.begin(), kBoundsNs.end(), ns) -
                                       kBoundsNs.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(ns, std::memory_order_relaxed);
}

void Histogram::write(std::string& out, std::string_view name, std::string_view labels) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBoundsNs.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, seconds(kBoundsNs[i]),
                       cumulative);
  }
  cumulative += counts_.back().load(std::memory_order_relaxed);
  out += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, cumulative);
  out += fmt::format("{}_sum{{{}}} {}\n", name, labels,
                     seconds(sum_ns_.load(std::memory_order_relaxed)));
  out += fmt::format("{}_count{{{}}} {}\n", name, labels, cumulative);
}

CallSeries* Metrics::series(const std::string& model, const std::string& method,
                            Transport transport) {
  MutexLock lock(mu_);
  auto key = std::make_tuple(model, method, transport);
  if (auto it = series_.find(key); it != series_.end()) return it->second.get();
  if (series_.size() >= max_series_) key = std::make_tuple("_other", "_other", transport);
  auto& made = series_[key];
  if (!made) {
    made = std::make_unique<CallSeries>();
    made->labels =
        fmt::format("model=\"{}\",method=\"{}\",transport=\"{}\"", escape_label(std::get<0>(key)),
                    escape_label(std::get<1>(key)), transport_name(transport));
  }
  return made.get();
}

void Metrics::add_collector(Collector c) {
  MutexLock lock(mu_);
  collectors_.push_back(std::move(c));
}

std::string Metrics::render() const {
  std::string out;
  std::vector<const CallSeries*> all;
  std::vector<Collector> collectors;
  {
    MutexLock lock(mu_);
    for (const auto& [key, s] : series_) all.push_back(s.get());
    collectors = collectors_;
  }
  out +=
      "# HELP et_serverd_calls_total Method calls (run, execute, set inputs, get outputs, "
      "KServe infer) by model, method, transport and gRPC status code.\n"
      "# TYPE et_serverd_calls_total counter\n";
  for (const CallSeries* s : all) {
    for (size_t code = 0; code < s->by_code.size(); ++code) {
      const uint64_t n = s->by_code[code].load(std::memory_order_relaxed);
      if (n == 0 && code != 0) continue;
      out += fmt::format("et_serverd_calls_total{{{},code=\"{}\"}} {}\n", s->labels,
                         kCodeNames[code], n);
    }
  }
  out +=
      "# HELP et_serverd_deadline_misses_total Calls that carried a deadline (a fast-path "
      "client's Method::set_deadline) and took longer than it in the daemon.\n"
      "# TYPE et_serverd_deadline_misses_total counter\n";
  for (const CallSeries* s : all) {
    const uint64_t n = s->deadline_misses.load(std::memory_order_relaxed);
    if (n > 0) out += fmt::format("et_serverd_deadline_misses_total{{{}}} {}\n", s->labels, n);
  }
  struct Family {
    std::string_view name, help;
    const Histogram CallSeries::*histogram;
  };
  for (const Family& f :
       {Family{"et_serverd_call_queue_seconds",
               "Time a call waited for its method instance and a worker.", &CallSeries::queue},
        Family{"et_serverd_call_compute_seconds", "Time a call's method executed.",
               &CallSeries::compute},
        Family{"et_serverd_call_seconds",
               "Time from a call's request reaching the daemon to its answer.",
               &CallSeries::round_trip}}) {
    out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", f.name, f.help, f.name);
    for (const CallSeries* s : all) (s->*f.histogram).write(out, f.name, s->labels);
  }
  for (const Collector& c : collectors) c(out);
  return out;
}

}  // namespace et::server::metrics
