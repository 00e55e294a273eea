// One call as its transport serves it, on the thread serving it. The transport opens
// the scope and gives it the answer's status code; Core, which finds the method,
// notes which one ran and how long the call waited and executed. When the scope closes
// the call is counted (Metrics). A scope with no Metrics records nothing.
#pragma once

#include <chrono>
#include <cstdint>

#include "server/metrics/metrics.h"

namespace et::server {
struct MethodSlot;
}

namespace et::server::metrics {

class CallScope {
 public:
  CallScope(Metrics* metrics, Transport transport);
  ~CallScope();  // counts the call (as INTERNAL if no code was set: it threw)
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  void set_code(int grpc_code) { code_ = grpc_code; }

  // The session and call of the scope open on this thread, 0 when none: what JSON log
  // lines carry. Calls are numbered in the order they first log.
  static uint64_t current_session();
  static uint64_t current_call();

  // What Core notes for the scope open on this thread (nothing when none is).
  static void note_method(MethodSlot& slot);
  // The method of `program` a call is for, known before an instance is (a KServe
  // call's model): its errors count under that model too.
  static void note_target(const std::string& registry_name, const std::string& sha256,
                          const std::string& method);
  static void note_session(uint64_t number);
  static void note_queue(uint64_t ns);
  static void note_compute(uint64_t ns);

  // A transport's per-call deadline (0: none) for the next scope opened on this thread:
  // when that call takes longer, from the scope's opening to its close, it counts as a
  // deadline miss of its method (et_serverd_deadline_misses_total).
  static void set_next_deadline(std::chrono::microseconds deadline);
  // Whether the last scope closed on this thread missed its deadline; forgets both that
  // and a deadline no scope took (a request refused before its call began).
  static bool take_missed_deadline();

 private:
  Metrics* metrics_;
  Transport transport_;
  CallScope* outer_;
  uint64_t call_ = 0, session_ = 0;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  CallSeries* series_ = nullptr;
  int code_ = 13;  // INTERNAL until set
  uint64_t queue_ns_ = 0, compute_ns_ = 0;
  std::chrono::microseconds deadline_{0};
  bool queued_ = false, computed_ = false;
};

// The model label of a program: its repository name without ".pte", else
// "sha256:" and the first 12 hex digits of its hash.
std::string model_label(const std::string& registry_name, const std::string& sha256);

}  // namespace et::server::metrics
