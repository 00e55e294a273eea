#include "server/metrics/call_scope.h"

#include "server/core/session.h"

namespace et::server::metrics {
namespace {
thread_local CallScope* current = nullptr;
thread_local std::chrono::microseconds next_deadline{0};
thread_local bool missed_deadline = false;
std::atomic<uint64_t> calls_started{0};
}  // namespace

uint64_t CallScope::current_session() { return current ? current->session_ : 0; }
uint64_t CallScope::current_call() {
  if (!current) return 0;
  // Numbered when a log line first asks: no shared counter touched on every call.
  if (current->call_ == 0)
    current->call_ = calls_started.fetch_add(1, std::memory_order_relaxed) + 1;
  return current->call_;
}

void CallScope::note_session(uint64_t number) {
  if (current) current->session_ = number;
}

std::string model_label(const std::string& registry_name, const std::string& sha256) {
  if (registry_name.empty()) return "sha256:" + sha256.substr(0, 12);
  if (registry_name.ends_with(".pte")) return registry_name.substr(0, registry_name.size() - 4);
  return registry_name;
}

CallScope::CallScope(Metrics* metrics, Transport transport)
    : metrics_(metrics), transport_(transport), outer_(current) {
  current = this;
  deadline_ = next_deadline;
  next_deadline = std::chrono::microseconds(0);
}

void CallScope::set_next_deadline(std::chrono::microseconds deadline) { next_deadline = deadline; }

bool CallScope::take_missed_deadline() {
  const bool missed = missed_deadline;
  missed_deadline = false;
  next_deadline = std::chrono::microseconds(0);
  return missed;
}

CallScope::~CallScope() {
  current = outer_;
  const auto total = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - started_)
                         .count();
  const bool missed = deadline_.count() > 0 && total > std::chrono::nanoseconds(deadline_).count();
  missed_deadline = missed;
  if (!metrics_) return;
  if (!series_) series_ = metrics_->series("", "", transport_);  // failed before a method
  if (missed) series_->deadline_misses.fetch_add(1, std::memory_order_relaxed);
  series_->by_code[static_cast<size_t>(code_) < series_->by_code.size() ? code_ : 2].fetch_add(
      1, std::memory_order_relaxed);
  if (queued_) series_->queue.observe(queue_ns_);
  if (computed_) series_->compute.observe(compute_ns_);
  series_->round_trip.observe(static_cast<uint64_t>(total));
}

void CallScope::note_method(MethodSlot& slot) {
  CallScope* s = current;
  if (!s || !s->metrics_) return;
  auto& cached = slot.metric_series[static_cast<size_t>(s->transport_)];
  CallSeries* series = cached.load(std::memory_order_acquire);
  if (!series) {
    series = s->metrics_->series(model_label(slot.program->name, slot.program->sha256),
                                 slot.method->meta().name, s->transport_);
    cached.store(series, std::memory_order_release);
  }
  s->series_ = series;
}

void CallScope::note_target(const std::string& registry_name, const std::string& sha256,
                            const std::string& method) {
  CallScope* s = current;
  if (!s || !s->metrics_ || s->series_) return;
  s->series_ = s->metrics_->series(model_label(registry_name, sha256), method, s->transport_);
}

void CallScope::note_queue(uint64_t ns) {
  if (CallScope* s = current) {
    s->queue_ns_ += ns;
    s->queued_ = true;
  }
}

void CallScope::note_compute(uint64_t ns) {
  if (CallScope* s = current) {
    s->compute_ns_ += ns;
    s->computed_ = true;
  }
}

}  // namespace et::server::metrics
