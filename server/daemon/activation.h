// systemd integration (deploy/systemd/, docs/operations.md): the listening sockets a
// socket unit hands over (sd_listen_fds), and the service manager's notifications
// (Type=notify: READY, STOPPING, STATUS, and the watchdog). Without systemd every call
// here does nothing.
#pragma once

#include <chrono>
#include <string>

#include "runtime/core/status.h"

namespace et::server {

// The sockets systemd passed: the daemon's gRPC socket (a listening Unix stream
// socket), its descriptor socket (a listening Unix SOCK_SEQPACKET socket), and the
// KServe gRPC listener (a stream socket named "kserve" with FileDescriptorName=, from a
// socket unit of its own). -1 where none was passed. The daemon owns them.
struct ActivatedSockets {
  int grpc = -1;
  int fd = -1;
  int kserve = -1;
  bool any() const { return grpc >= 0 || fd >= 0 || kserve >= 0; }
};
// Takes them (and clears LISTEN_FDS from the environment). InvalidArgument for a
// socket of an unexpected kind or name, naming it.
Result<ActivatedSockets> take_activated_sockets();

// sd_notify: "READY=1", "STOPPING=1", "STATUS=..." (nothing without NOTIFY_SOCKET).
void notify_service_manager(const std::string& state);
// The watchdog interval systemd asked for (WatchdogSec=), zero when none: the daemon
// sends "WATCHDOG=1" at half of it from its main loop.
std::chrono::microseconds watchdog_interval();

}  // namespace et::server
