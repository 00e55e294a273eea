// Who may stand behind a Unix socket: the checks daemon and clients both make so that
// another local user can neither squat the daemon's socket path nor pose as the
// daemon (nor as a client on the descriptor socket). "Trusted" means this process's
// user or root.
//
// Thread-safety: free functions over the file system and sockets; any thread.
#pragma once

#include <string>

namespace etserver {

// Where the daemon listens by default: $ETSERVER_SOCKET, else
// $XDG_RUNTIME_DIR/et-serverd.sock, else /tmp/et-serverd-<uid>/et-serverd.sock (a
// private directory the daemon creates with mode 0700).
std::string default_socket_path();

// For the daemon, before it binds `socket_path`: the directory it goes in must be one
// that only trusted users can change (owned by this user or root, writable by no one
// else). Creates the default private directory (mode 0700) when it is missing.
// Empty when fine, else what is wrong and what to do.
std::string unsafe_socket_directory(const std::string& socket_path);

// For a client, before it connects: a socket that exists must be owned by a trusted
// user, in a directory where nobody else can replace it (not writable by others, or
// sticky like /tmp). A missing socket is fine here (connecting will say no daemon).
// Empty when fine, else why not.
std::string untrusted_socket(const std::string& socket_path);

// For either side of a connected Unix socket: the peer (SO_PEERCRED) must run as a
// trusted user. Empty when it does, else who it is.
std::string untrusted_peer(int connected_fd);

}  // namespace etserver
