// Who may stand behind a Unix socket: the checks daemon and clients both make so that
// another local user can neither squat the daemon's socket path nor pose as the
// daemon (nor as a client on the descriptor socket). A client trusts its own user and
// root, and the users named in $ETSERVER_DAEMON_USER (a daemon shared by a group runs
// as a user of its own). A daemon serves its own user and root, and with --socket-group
// the members of that group.
//
// Thread-safety: free functions over the file system and sockets; any thread.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace et::wire {

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

// For a client, of the daemon at the other end of a connected Unix socket: the peer
// (SO_PEERCRED) must run as a trusted user. Empty when it does, else who it is.
std::string untrusted_peer(int connected_fd);

// Who is at the other end of a connected Unix socket (SO_PEERCRED, SO_PEERGROUPS):
// nullopt when the kernel does not say.
struct PeerCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  std::vector<gid_t> groups;  // supplementary groups (the primary one is `gid`)
};
std::optional<PeerCredentials> peer_credentials(int connected_fd);

// For the daemon: whether it serves `peer`: its own user, root, or (with `group` >= 0,
// --socket-group) a member of that group. Empty when it does, else who the peer is and
// what the operator can do.
std::string refused_client(const PeerCredentials& peer, int64_t group);

}  // namespace et::wire
