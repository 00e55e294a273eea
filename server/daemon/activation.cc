#include "server/daemon/activation.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <cstring>

#include "runtime/core/printable.h"

namespace et::server {

Result<ActivatedSockets> take_activated_sockets() {
  ActivatedSockets out;
  char** names = nullptr;
  const int n = sd_listen_fds_with_names(1, &names);
  if (n < 0) return io_error(fmt::format("sd_listen_fds: {}", std::strerror(-n)));
  Status status;
  for (int i = 0; i < n; ++i) {
    const int fd = SD_LISTEN_FDS_START + i;
    const std::string name = names && names[i] ? names[i] : "";
    const bool seqpacket = sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, nullptr, 0) > 0;
    const bool unix_stream = sd_is_socket_unix(fd, SOCK_STREAM, 1, nullptr, 0) > 0;
    const bool stream = sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) > 0;
    // By type first: a socket unit gives all its sockets one name (FileDescriptorName=).
    int* slot = nullptr;
    if (seqpacket) {
      slot = &out.fd;
    } else if (stream && name == "kserve") {
      slot = &out.kserve;
    } else if (unix_stream) {
      slot = &out.grpc;
    }
    if (!slot || *slot >= 0) {
      if (status.ok()) {
        status = invalid_argument(fmt::format(
            "socket activation: socket {} (name '{}') is not one the daemon takes, or a second "
            "of its kind: give one listening Unix stream socket (gRPC), one listening Unix "
            "SOCK_SEQPACKET socket (the descriptor socket), and optionally a listening stream "
            "socket named kserve (FileDescriptorName=kserve; deploy/systemd/)",
            i, printable(name)));
      }
      continue;
    }
    *slot = fd;
  }
  if (names) {
    for (int i = 0; i < n; ++i) free(names[i]);
    free(names);
  }
  if (!status.ok()) return status;
  return out;
}

void notify_service_manager(const std::string& state) { (void)sd_notify(0, state.c_str()); }

std::chrono::microseconds watchdog_interval() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0) return std::chrono::microseconds(0);
  return std::chrono::microseconds(usec);
}

}  // namespace et::server
