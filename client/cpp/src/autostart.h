// Starting et-serverd for a client that found none listening (ClientOptions::spawn):
// the zero-setup path of CI jobs (docs/ci.md). Under SOCKET.lock (proto/spawn_lock.h),
// so that many processes starting at once end up with one daemon.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "etclient/status.h"

namespace etclient {

struct SpawnRequest {
  std::string socket;
  std::string serverd_path;  // ClientOptions::serverd_path; see find_serverd()
  std::chrono::seconds idle_exit{300};
  std::chrono::milliseconds timeout{30'000};  // for the lock and for the daemon to listen
};

// Whether something accepts connections on the Unix socket `socket` now.
bool daemon_listens(const std::string& socket);

// The et-serverd to start: $ETSERVER_BIN, else `hint` (when it exists), else
// et-serverd on PATH; empty when there is none.
std::string find_serverd(const std::string& hint);

// Whether clients start a daemon: `option` when set, else $ETSERVER_SPAWN ("0", "no",
// "false" or "off" turn it off), else yes.
bool spawn_enabled(const std::optional<bool>& option);

// Ok when a daemon listens at the socket on return: one was there, another process
// started one meanwhile, or this call started `et-serverd --detach --idle-exit N`
// (its output appended to SOCKET.log). Unavailable, saying what to do, when none could
// be started (no binary, or it failed: the log's last lines are quoted).
Status ensure_daemon(const SpawnRequest& request);

}  // namespace etclient
