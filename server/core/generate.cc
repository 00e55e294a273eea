// A Generate call's work: prefill and decode on the held instance, while a thread of
// its own writes the tokens to the caller.
#include <fmt/format.h>

#include <condition_variable>
#include <deque>
#include <thread>

#include "server/core/core.h"

namespace et::server {
namespace {

// The shortest time between two writes of generated tokens to a client (the first
// token is written at once).
constexpr std::chrono::milliseconds kStreamInterval{4};

// Tokens between the generation (which holds the method and a worker) and the thread
// that writes them to the client: a client that stops reading stalls only the writer,
// and the generation stops when too many tokens wait for too long.
struct TokenQueue {
  Mutex mu;
  std::condition_variable changed;
  std::deque<int64_t> tokens ET_GUARDED_BY(mu);
  bool done ET_GUARDED_BY(mu) = false;    // no more tokens come
  bool broken ET_GUARDED_BY(mu) = false;  // a write failed (the client went away)
};

}  // namespace

// runtime/llm/generation.h's program_max_context, with the daemon's limits and the
// call's cancellation, asked once per instance; the caller holds the slot.
int64_t Core::program_context(MethodSlot& slot, const std::atomic<bool>& cancelled) const {
  if (!slot.context) {
    MethodOptions options;
    options.max_planned_bytes = limits_.max_method_bytes;
    slot.context =
        program_max_context(slot.program->program, options,
                            {std::chrono::steady_clock::now() + limits_.execution_deadline,
                             &cancelled, limits_.max_instructions});
  }
  return *slot.context;
}

Status Core::generate(MethodSlot& slot, const std::atomic<bool>& cancelled, GenerateWork& work,
                      uint64_t& queued_ns) {
  GenerationOptions& o = work.options;
  TokenQueue queue;
  constexpr size_t kMostWaiting = 4096;  // tokens written to no one yet
  std::thread writer([&] {
    MutexLock lock(queue.mu);
    std::chrono::steady_clock::time_point last_write{};
    std::vector<int64_t> batch;
    while (true) {
      lock.wait(queue.changed,
                [&]() ET_REQUIRES(queue.mu) { return queue.done || !queue.tokens.empty(); });
      if (queue.tokens.empty()) return;  // done
      // The first token goes at once; later ones wait out kStreamInterval from the last
      // write, gathering what comes meanwhile (the loop does not wake this thread
      // for them), so a fast decode does not pay a write per token in threads that
      // take the cores it computes on.
      lock.wait_until(queue.changed, last_write + kStreamInterval, [&]() ET_REQUIRES(queue.mu) {
        return queue.done || queue.tokens.size() >= kMostWaiting / 2;
      });
      batch.assign(queue.tokens.begin(), queue.tokens.end());
      queue.tokens.clear();
      queue.changed.notify_all();
      lock.unlock();
      const bool sent = work.write(batch);
      last_write = std::chrono::steady_clock::now();
      lock.lock();
      if (!sent) {
        queue.broken = true;
        queue.changed.notify_all();
        return;
      }
    }
  });
  bool not_reading = false;
  GenerationStats stats;
  Status status = hold(slot, queued_ns, [&]() -> Status {
    if (o.max_context <= 0) o.max_context = program_context(slot, cancelled);
    if (o.max_context == 0 && o.max_new_tokens == 0) {
      o.max_new_tokens = GenerateWork::kDefaultMostNewTokens;
    }
    auto result = et::generate(
        *slot.method, o, slot.generation,
        [&]() {
          uint64_t ns = 0;
          return execute_locked(cancelled, slot, ns);
        },
        [&](int64_t token) {
          MutexLock lock(queue.mu);
          if (queue.tokens.size() >= kMostWaiting &&
              !lock.wait_for(queue.changed, limits_.request_deadline, [&]() ET_REQUIRES(queue.mu) {
                return queue.broken || queue.tokens.size() < kMostWaiting;
              })) {
            not_reading = true;
            return false;
          }
          if (queue.broken || cancelled.load()) return false;
          queue.tokens.push_back(token);
          // The writer waits for a first token, or for half the most a queue holds.
          if (queue.tokens.size() == 1 || queue.tokens.size() == kMostWaiting / 2) {
            queue.changed.notify_all();
          }
          return true;
        });
    if (!result.ok()) return result.status();
    stats = *result;
    return Status();
  });
  {
    MutexLock lock(queue.mu);
    queue.done = true;
  }
  queue.changed.notify_all();
  writer.join();
  if (!status.ok()) return status;
  if (not_reading) {
    return resource_exhausted(fmt::format(
        "generate: the client read none of {} waiting tokens for {} ms; generation stopped",
        kMostWaiting, limits_.request_deadline.count()));
  }
  bool broken = false;
  {
    MutexLock lock(queue.mu);  // the writer has ended; the analysis cannot know
    broken = queue.broken;
  }
  if (broken || cancelled.load()) return unavailable("generate: the caller went away");
  work.stats = std::move(stats);
  return Status();
}

}  // namespace et::server
