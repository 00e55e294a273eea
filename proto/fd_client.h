// The client side of the descriptor socket (proto/fd_protocol.h): sends one descriptor
// (or none, for tests of the daemon's refusals) and reads the reply.
#pragma once

#include <cstdint>
#include <string>

namespace et::wire {

struct FdExchange {
  bool delivered = false;  // false: no daemon answered (message says why)
  uint32_t code = 0;       // the reply's code: 0 OK, else the daemon's status code
  uint64_t id = 0;         // the segment or program id when OK
  std::string message;     // the daemon's error message, or why nothing was delivered
};

// Connects to `fd_socket`, sends a request of `kind` for `session` with `fd` attached
// (none when fd < 0), and returns the reply. Thread-safe (one connection per call).
// With `keep_connection`, a connection that delivered its reply is left open and
// returned there (the caller closes it; a fast-path channel's link), else -1.
FdExchange send_descriptor(const std::string& fd_socket, const std::string& session, int fd,
                           uint16_t kind, int* keep_connection = nullptr);

}  // namespace et::wire
