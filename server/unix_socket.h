// Unix socket paths: the default (DESIGN.md section 6), and taking over a path from a
// daemon that died without removing its socket, without stealing a live one.
#pragma once

#include <string>

#include "runtime/status.h"

namespace et::server {

// $ETSERVER_SOCKET, else $XDG_RUNTIME_DIR/et-serverd.sock, else
// /tmp/et-serverd-<uid>/et-serverd.sock (proto/socket_trust.h).
std::string default_socket_path();

// Makes `path` free to bind: nothing there, or a socket file nobody listens on
// (removed). FailedPrecondition when its directory can be changed by other users (they
// could squat or take over the path), when a live server answers on it, or when
// something other than a socket is there.
Status claim_socket_path(const std::string& path);

}  // namespace et::server
