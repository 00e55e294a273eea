// A second, minimal implementation of the fast path's client side, written from
// docs/fast_path.md alone (libetclient has the real one): the test client's way to
// call the daemon without gRPC, and a check that the spec is enough to speak it.
#pragma once

#include <google/protobuf/message_lite.h>
#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "proto/fast_path.h"

namespace et::testing {

class FastTestChannel {
 public:
  // Opens a channel of `bytes` bytes for `session`; null (and `error`) when refused.
  static std::unique_ptr<FastTestChannel> open(const std::string& fd_socket,
                                               const std::string& session, std::string* error,
                                               size_t bytes = 64 << 10);
  ~FastTestChannel();

  // One call: the daemon's answer as gRPC would give it; UNAVAILABLE when the channel
  // closed, DEADLINE_EXCEEDED after `timeout_ms` without an answer.
  grpc::Status call(et::wire::FastCall kind, const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite& response, int timeout_ms = 180'000);

  bool fits(size_t bytes) const {
    return bytes <= et::wire::channel_layout(size_).message_capacity();
  }

  // The raw channel, for tests that write into it as a hostile client would.
  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }
  et::wire::ChannelHeader* header() const {
    return reinterpret_cast<et::wire::ChannelHeader*>(base_);
  }
  int link() const { return link_; }
  // Rings the doorbell for request `seq` (the request area already written).
  void ring(uint32_t seq);
  // Waits until response_seq is `seq`; false on timeout or a closed channel.
  bool wait(uint32_t seq, int timeout_ms);
  uint32_t next_seq() { return ++seq_; }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  int memfd_ = -1, link_ = -1;
  uint32_t seq_ = 0;
};

}  // namespace et::testing
