// What a fast-path channel (docs/fast_path.md) answers: each request parsed as the et
// protocol's message, made the very call gRPC makes (server/transport/etproto/), and
// answered with its response or its error, so both transports check and fail alike.
#pragma once

#include <string>

#include "server/transport/etproto/et_protocol.h"
#include "server/transport/ring/fast_channel.h"

namespace et::server {

// The handler of a channel of the session `token`: counts each call on the metrics
// page (transport "fast_path"), and never throws. It keeps its own `protocol` (which
// holds nothing but the core): a channel may outlive the one it was opened through,
// never the core, whose sessions end their channels.
FastChannel::Handler ring_call_handler(EtProtocol protocol, std::string token);

}  // namespace et::server
