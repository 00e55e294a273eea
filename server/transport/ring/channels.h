// Opening fast-path channels (docs/fast_path.md) for sessions: the channel's memory is
// the client's memfd, charged to the session's mapped bytes; the channel is attached to
// the session (Core::attach), which stops and joins it when it closes.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "server/core/core.h"
#include "server/transport/etproto/et_protocol.h"
#include "server/transport/ring/fast_channel.h"

namespace et::server {

// --no-fast-path, --max-fast-channels, --max-fast-channels-per-session,
// --fast-path-spin-us, --fast-path-wake-ahead-us.
struct FastPathOptions {
  bool enabled = true;  // false: channels are refused and sessions offer none
  size_t max_channels = 512;
  size_t max_channels_per_session = 64;  // each is served by a thread of its own
  FastChannelTiming timing;
};

// Opens a channel for the session `token` over `memfd`, served until the session ends
// or `link` (the client's connection) is shut down, each request answered by `protocol`
// (server/transport/ring/ring_calls.h); `channel` receives it, for the caller to stop it
// when the link closes. Takes ownership of both descriptors in every case. Errors:
// NotSupported when the fast path is off; the core's for the session; InvalidArgument
// for memory the channel cannot use; ResourceExhausted at the channel limits or the
// session's mapped bytes.
Status open_fast_channel(Core& core, const FastPathOptions& options, EtProtocol protocol,
                         const std::string& token, int memfd, int link,
                         std::weak_ptr<FastChannel>& channel);

}  // namespace et::server
