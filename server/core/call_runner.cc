// Core::call, the one way a call enters the core: resolving its target, holding the
// instance and a worker, and running its work.
#include <chrono>
#include <optional>

#include "runtime/core/exceptions.h"
#include "server/core/core.h"
#include "server/core/core_internal.h"
#include "server/metrics/call_scope.h"

namespace et::server {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t ns_since(Clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}

}  // namespace

Status Core::call(CallRequest& req) {
  if (shutting_down_) return shutting_down_error();
  std::shared_ptr<Session> session;
  std::optional<CallCount> counted;
  std::shared_ptr<MethodSlot> owned;
  MethodSlot* slot = nullptr;
  const std::atomic<bool>* cancelled = nullptr;
  SegmentLookup segments;
  if (const auto* m = std::get_if<SessionMethod>(&req.target)) {
    ET_ASSIGN_OR_RETURN(session, session_for(m->token));
    ET_ASSIGN_OR_RETURN(CallCount count, CallCount::start(*this, *session));
    counted.emplace(std::move(count));
    ET_ASSIGN_OR_RETURN(owned, method_for(*session, m->handle));
    slot = owned.get();
    cancelled = &session->cancelled;
    segments = segment_lookup(session);
  } else {
    const HeldInstance& held = std::get<HeldInstance>(req.target);
    if (held.slot == nullptr || held.cancelled == nullptr) {
      return internal_error("call: a held instance needs its slot and cancellation flag");
    }
    slot = held.slot;
    cancelled = held.cancelled;
  }
  if (auto* run_work = std::get_if<RunWork>(&req.work)) {
    return hold(
        *slot, req.times.queued_ns,
        [&] { return run(*slot, segments, *cancelled, *run_work, req); }, req.bounds);
  }
  if (auto* hold_work = std::get_if<HoldWork>(&req.work)) {
    return hold(
        *slot, req.times.queued_ns, [&] { return hold_work->body(*slot, segments); }, req.bounds);
  }
  GenerateWork& generate_work = std::get<GenerateWork>(req.work);
  if (generate_work.options.prompt.size() > GenerateWork::kMostTokens ||
      generate_work.options.max_new_tokens > GenerateWork::kMostTokens) {
    return invalid_argument(fmt::format("generate: at most {} prompt and {} new tokens",
                                        GenerateWork::kMostTokens, GenerateWork::kMostTokens));
  }
  return generate(*slot, *cancelled, generate_work, req.times.queued_ns);
}

Status Core::hold(MethodSlot& slot, uint64_t& queued_ns, const std::function<Status()>& fn,
                  const CallBounds& bounds) {
  const auto arrived = Clock::now();
  const auto request_deadline = arrived + limits_.request_deadline;
  const bool own_deadline_first = bounds.deadline < request_deadline;
  const auto deadline = own_deadline_first ? bounds.deadline : request_deadline;
  {
    MutexLock lock(slot.mu);
    if (!lock.wait_until(slot.freed, deadline, [&]() ET_REQUIRES(slot.mu) { return !slot.busy; })) {
      return deadline_exceeded(
          own_deadline_first
              ? "deadline: the call's deadline passed while the method was busy with another "
                "call; it did not run"
              : "deadline: the method stayed busy with another call past the request deadline");
    }
    if (!slot.method) return not_found("method_handle: the method was dropped");
    slot.busy = true;
    metrics::CallScope::note_method(slot);
  }
  // Guards, not the happy path, give the slot and the worker back: whatever `fn` does
  // (an error, an exception), the next call finds both free.
  struct SlotHold {
    MethodSlot& slot;
    ~SlotHold() {
      {
        MutexLock lock(slot.mu);
        slot.busy = false;
      }
      slot.freed.notify_all();
    }
  } slot_hold{slot};
  if (Status st = take_worker(deadline); !st.ok()) {
    return own_deadline_first ? deadline_exceeded(
                                    "deadline: the call's deadline passed while it waited for a "
                                    "worker (every one busy); it did not run")
                              : st;
  }
  WorkerHold worker_hold{*this};
  queued_ns = ns_since(arrived);
  metrics::CallScope::note_queue(queued_ns);
  // Stale work never delays fresh work: what waited past its caller's interest stops here.
  if (own_deadline_first && Clock::now() >= bounds.deadline) {
    return deadline_exceeded("deadline: the call's deadline passed before it ran; it did not run");
  }
  if (bounds.gone()) return unavailable("the caller went away before its call ran; it did not run");
  return catch_exceptions("", fn);
}

Status Core::take_worker(Clock::time_point deadline) {
  MutexLock workers(run_mu_);
  if (!workers.wait_until(run_cv_, deadline, [&]() ET_REQUIRES(run_mu_) {
        return running_ < limits_.max_concurrent_runs;
      })) {
    return deadline_exceeded("deadline: no worker became free before the request deadline");
  }
  ++running_;
  return Status();
}

Core::WorkerHold::~WorkerHold() {
  {
    MutexLock workers(core.run_mu_);
    --core.running_;
  }
  core.run_cv_.notify_one();
}

Status Core::run(MethodSlot& slot, const SegmentLookup& segments,
                 const std::atomic<bool>& cancelled, RunWork& work, CallRequest& call) {
  CallTimes& times = call.times;
  Method& m = *slot.method;
  if (work.bind) {
    const auto step = Clock::now();
    std::vector<DecodedInput> decoded;
    Status st = work.bind(m, segments, decoded);
    if (st.ok()) {
      std::vector<InputValue> values;
      values.reserve(decoded.size());
      for (const DecodedInput& d : decoded) values.push_back(d.value);
      st = m.set_inputs(values);
      slot.inputs = std::move(decoded);  // what the bound inputs point into stays alive
      if (!work.bind_context.empty()) st = st.with_context(work.bind_context);
    }
    times.input_ns = ns_since(step);
    if (!st.ok()) return st;
  }
  if (work.execute) {
    Status st = execute_locked(cancelled, slot, times.infer_ns, call.bounds);
    if (!st.ok()) return st;
  }
  if (!work.read) return Status();
  const auto step = Clock::now();
  Status st = work.read(m, segments);
  times.output_ns = ns_since(step);
  return st;
}

Status Core::execute_locked(const std::atomic<bool>& cancelled, MethodSlot& slot, uint64_t& ns,
                            const CallBounds& bounds) {
  executes_.fetch_add(1, std::memory_order_relaxed);
  const auto start = Clock::now();
  ExecuteProfile* profile = nullptr;
  MethodSlot::Profiling* profiling = slot.profiling.get();
  if (profiling != nullptr) {
    if (profiling->executes.size() < profiling->max_executes &&
        profiling->events < MethodSlot::Profiling::kMostEvents) {
      profile = &profiling->executes.emplace_back();
    } else {
      ++profiling->dropped;
    }
  }
  const auto execution_deadline = start + limits_.execution_deadline;
  const bool own_deadline_first = bounds.deadline < execution_deadline;
  ExecuteLimits limits;
  limits.deadline = own_deadline_first ? bounds.deadline : execution_deadline;
  limits.cancelled = &cancelled;
  limits.caller_gone = bounds.caller_gone;
  limits.caller_gone_arg = bounds.caller_gone_arg;
  limits.max_instructions = limits_.max_instructions;
  Status status = slot.method->execute(limits, profile);
  if (own_deadline_first && status.code() == StatusCode::kDeadlineExceeded) {
    status = deadline_exceeded(
        "deadline: the call's deadline passed while its method ran; it was stopped between "
        "instructions (the method stays usable)");
  }
  if (profile != nullptr) {
    if (profile->start_ns == 0) {
      profiling->executes.pop_back();  // refused before it ran (inputs not set)
    } else {
      profiling->events += profile->events.size();
    }
  }
  ns = ns_since(start);
  metrics::CallScope::note_compute(ns);
  return status;
}

}  // namespace et::server
