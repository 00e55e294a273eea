// The client end of a fast-path channel (docs/fast_path.md): a memfd shared with the
// daemon, a request written into it and a doorbell rung, the answer read back: no
// gRPC round trip. One per Method (a Method is used by one thread at a time, so a
// channel has at most one call in flight).
//
// Waiting: polls the response word for `spin`, then sleeps on it (a futex), waking
// every 20 ms to check the channel's link socket: a daemon that died or closed the
// session is seen within that (kUnavailable). No wait outlasts the daemon's own
// deadlines (it says them when the channel opens) by more than 5 s (kDeadlineExceeded;
// the channel is then broken and the Method opens another).
#pragma once

#include <google/protobuf/message_lite.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "etclient/status.h"
#include "proto/fast_path.h"

namespace etclient {

class FastPath {
 public:
  // Opens a channel of the session `session` on the daemon's descriptor socket.
  // kUnavailable when nobody answers there; the daemon's refusal otherwise (a limit:
  // the caller then uses gRPC).
  static Result<std::unique_ptr<FastPath>> open(const std::string& fd_socket,
                                                const std::string& session,
                                                std::chrono::microseconds spin);
  ~FastPath();
  FastPath(const FastPath&) = delete;
  FastPath& operator=(const FastPath&) = delete;

  // Sends `request` as a call of `kind` and parses the answer into `response`. Errors:
  // the daemon's, exactly as over gRPC (from_grpc); kUnavailable when the daemon is
  // gone; kDeadlineExceeded past the daemon's deadlines; kResourceExhausted when the
  // request does not fit the channel (the caller then uses gRPC for it).
  Status call(et::wire::FastCall kind, const google::protobuf::MessageLite& request,
              google::protobuf::MessageLite& response);

  // Whether a request of `bytes` fits the channel.
  bool fits(size_t bytes) const { return bytes <= layout_.message_capacity(); }

  // True after the channel failed (its daemon gone, or an answer overdue).
  bool broken() const { return broken_; }

  // The deadline the next calls carry (0: none), and whether the daemon said the last
  // call's part in the daemon took longer (docs/fast_path.md, "Deadlines").
  void set_deadline(std::chrono::microseconds deadline) {
    deadline_us_ = static_cast<uint32_t>(std::min<int64_t>(deadline.count(), UINT32_MAX));
  }
  bool last_missed_deadline() const { return last_missed_; }
  // The bound the next calls carry (0: none): the daemon stops them there.
  void set_timeout(std::chrono::milliseconds timeout) {
    timeout_us_ = static_cast<uint32_t>(
        std::min<int64_t>(std::chrono::microseconds(timeout).count(), UINT32_MAX));
  }

 private:
  FastPath() = default;
  // Waits for the answer to `seq`.
  Status wait_for(uint32_t seq);
  // True while the daemon still holds the link open.
  bool link_alive() const;

  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  et::wire::ChannelLayout layout_{};
  et::wire::ChannelHeader* header_ = nullptr;
  int memfd_ = -1, link_ = -1;
  std::chrono::microseconds spin_{0};
  std::chrono::milliseconds longest_wait_{0};
  uint32_t seq_ = 0;
  uint32_t deadline_us_ = 0;
  uint32_t timeout_us_ = 0;
  bool broken_ = false;
  bool last_missed_ = false;
};

// The spin the client uses: $ETSERVER_SPIN_US when set (microseconds), else `fallback`.
std::chrono::microseconds spin_from_env(std::chrono::microseconds fallback);

}  // namespace etclient
