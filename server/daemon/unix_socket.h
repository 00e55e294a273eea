// Unix socket paths: the default (DESIGN.md section 6), and taking over a path from a
// daemon that died without removing its socket, without stealing a live one.
#pragma once

#include <sys/types.h>

#include <string>

#include "runtime/core/status.h"

namespace et::server {

// $ETSERVER_SOCKET, else $XDG_RUNTIME_DIR/et-serverd.sock, else
// /tmp/et-serverd-<uid>/et-serverd.sock (proto/socket_trust.h).
std::string default_socket_path();

// Makes `path` free to bind: nothing there, or a socket file nobody listens on
// (removed). FailedPrecondition when its directory can be changed by other users (they
// could squat or take over the path), when a live server answers on it, or when
// something other than a socket is there.
Status claim_socket_path(const std::string& path);

// --socket-group: gives the socket at `path` to `group` with mode 0660, so that its
// members can connect. IoError naming the path when the daemon cannot (it must be in
// the group, or root).
Status share_socket_with_group(const std::string& path, gid_t group);

// The group named `name` (a group name or a number). InvalidArgument when there is none.
Result<gid_t> find_group(const std::string& name);

}  // namespace et::server
