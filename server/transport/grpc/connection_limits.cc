#include "server/transport/grpc/connection_limits.h"

#include <grpc/grpc.h>

#include <algorithm>
#include <climits>

namespace et::server {
namespace {

int as_int(std::chrono::milliseconds ms) {
  return static_cast<int>(std::clamp<int64_t>(ms.count(), 1, INT_MAX));
}

}  // namespace

void apply_connection_limits(const ConnectionLimits& limits, grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, as_int(limits.keepalive));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, as_int(limits.keepalive_timeout));
  // A session's stream carries no data for hours: its connection must still be pinged
  // (gRPC stops after two pings without data unless told otherwise).
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, std::max(limits.max_streams, 1));
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             as_int(limits.handshake_timeout));
}

}  // namespace et::server
