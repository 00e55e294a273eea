// A gRPC call's bounds as the core takes them (CallBounds in server/core/call.h): the
// client's deadline, moved from the system clock gRPC gives to the steady clock the
// core waits on, and its cancellation, asked through the call's ServerContext. Shared
// by the et protocol's and KServe's gRPC services. Header-only.
#pragma once

#include <grpcpp/server_context.h>

#include <chrono>

#include "server/core/call.h"

namespace et::server {

// The bounds of the call `ctx` serves; valid while the handler runs.
inline CallBounds call_bounds_of(const grpc::ServerContext& ctx) {
  CallBounds bounds;
  const auto deadline = ctx.deadline();  // time_point::max() when the client set none
  if (deadline != std::chrono::system_clock::time_point::max()) {
    const auto left = deadline - std::chrono::system_clock::now();
    bounds.deadline = std::chrono::steady_clock::now() +
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
  }
  bounds.caller_gone = [](const void* arg) {
    return static_cast<const grpc::ServerContext*>(arg)->IsCancelled();
  };
  bounds.caller_gone_arg = &ctx;
  return bounds;
}

}  // namespace et::server
