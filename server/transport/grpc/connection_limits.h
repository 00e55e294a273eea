// How the daemon's gRPC servers (its own protocol and KServe's) treat connections, so
// that a peer which stops reading or answering cannot hold the daemon's memory, threads
// or sessions for ever: every connection is pinged when idle and closed when a ping goes
// unanswered, and one connection may carry only so many calls at once.
#pragma once

#include <grpcpp/server_builder.h>

#include <chrono>

namespace et::server {

struct ConnectionLimits {
  // --keepalive-ms: ping a connection that has sent nothing for this long.
  std::chrono::milliseconds keepalive{15'000};
  // --keepalive-timeout-ms: close it (ending its sessions) when a ping goes unanswered
  // this long: a client stopped (SIGSTOP, a debugger) or cut off loses its session after
  // keepalive + keepalive_timeout.
  std::chrono::milliseconds keepalive_timeout{20'000};
  // --max-streams-per-connection: calls (HTTP/2 streams) open at once on one
  // connection; a call whose answer the client does not read stays open, so this
  // bounds what a non-reading client makes the daemon hold.
  int max_streams = 128;
  // TCP connections that do not finish their handshake in this long are closed.
  std::chrono::milliseconds handshake_timeout{10'000};
};

// Sets the server arguments for `limits` on `builder`.
void apply_connection_limits(const ConnectionLimits& limits, grpc::ServerBuilder& builder);

}  // namespace et::server
