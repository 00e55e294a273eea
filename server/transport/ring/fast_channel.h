// One fast-path channel (docs/fast_path.md): a memfd the client shares, served by a
// thread of its own that waits on the request doorbell, copies each request out of the
// shared memory, hands it to a handler and writes the answer back.
//
// Everything in the channel is writable by the client at any time, so nothing read
// from it is trusted: a request's kind and length are read once into private memory
// and bounded, the message is copied out before it is parsed, and the daemon never
// reads the response area back. A hostile client can only waste its own channel's
// thread (each request is bounded work) or get errors.
//
// Thread-safety: stop() from any thread; the handler runs on the channel's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "proto/fast_path.h"
#include "runtime/core/status.h"
#include "server/core/call.h"
#include "server/core/segment.h"
#include "server/core/session.h"

namespace et::server {

// How a channel's thread waits for the next request: it polls for `spin` after each
// answer, then sleeps; when the caller calls at a steady rate, it also wakes
// `wake_ahead` before the next call is due and polls until as long after (0: never).
// It polls only where polling pays (docs/fast_path.md, "Waiting"): never while the
// machine is saturated; in the real-time class, only beside a caller pinned to
// another CPU.
struct FastChannelTiming {
  std::chrono::microseconds spin{50};
  std::chrono::microseconds wake_ahead{150};
};

// How the channels' threads of this process have waited for requests (the metrics
// page's et_serverd_fast_path_waits_total and et_serverd_fast_path_spins_skipped_total).
struct FastChannelWaits {
  uint64_t spun = 0;               // the request came while polling
  uint64_t slept = 0;              // the thread slept on the doorbell
  uint64_t skipped_saturated = 0;  // no poll (or one cut short): the machine was saturated
};

class FastChannel final : public SessionAttachment {
 public:
  // Counts of every channel of the process so far.
  static FastChannelWaits waits();

  // Answers one request within `bounds` (the client's timeout for it): fills `reply`
  // with the response message and returns its gRPC status code (0 OK; else `reply` is
  // the error message). Must not throw.
  using Handler = std::function<uint32_t(et::wire::FastCall kind, std::span<const uint8_t> request,
                                         std::string& reply, const CallBounds& bounds)>;

  // Starts serving `memory` (a segment adopted from the client's memfd) with
  // `handler`. `link` is the client's connection (owned from now on, closed in every
  // case): stop() shuts it down so the client sees the channel end. InvalidArgument when the
  // segment's size is outside the bounds of proto/fast_path.h or not a multiple of 4096.
  // `on_finished` runs on the serving thread as it returns, once (must not throw, nor
  // destroy the channel): what counts live channels hears of the end when it happens.
  static Result<std::shared_ptr<FastChannel>> start(std::shared_ptr<Segment> memory, int link,
                                                    Handler handler, FastChannelTiming timing,
                                                    std::function<void()> on_finished = {});

  // The most bytes a channel's memory may have (proto/fast_path.h).
  static constexpr uint64_t kMostBytes = et::wire::kChannelMaxBytes;

  // Stops serving (a request being handled finishes first) and shuts the link down.
  // Non-blocking.
  void stop() override;
  // True once the serving thread has returned.
  bool finished() const override { return finished_; }
  // Waits for the serving thread. REQUIRES: not called on that thread.
  void join() override;

  ~FastChannel() override;  // stop() and join()
  FastChannel(const FastChannel&) = delete;
  FastChannel& operator=(const FastChannel&) = delete;

 private:
  FastChannel() = default;
  void serve();
  using Clock = std::chrono::steady_clock;
  // Waits until request_seq differs from `last`; false when stopped.
  bool wait_for_request(uint32_t last, uint32_t& seq);
  // Poll (where polling pays), or sleep on the doorbell, until `until`: true when a
  // request or stop came.
  bool poll_until(uint32_t last, Clock::time_point until, uint32_t& seq);
  // Whether this thread may poll now: an ordinary one while the machine has a CPU to
  // spare, a real-time one beside a caller pinned to another CPU (port/realtime.h).
  bool may_poll();
  bool sleep_until(uint32_t last, Clock::time_point until, uint32_t& seq);
  void answer(uint32_t seq);

  std::shared_ptr<Segment> memory_;
  uint8_t* base_ = nullptr;
  et::wire::ChannelLayout layout_{};
  et::wire::ChannelHeader* header_ = nullptr;
  int link_ = -1;
  Handler handler_;
  std::function<void()> on_finished_;
  FastChannelTiming timing_;
  std::chrono::microseconds predicted_gap_{0};  // from one answer to the next request
  std::vector<uint8_t> request_;                // the copy a request is parsed from
  std::string reply_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace et::server
