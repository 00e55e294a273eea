// The daemon's listening sockets for gRPC and HTTP (its own Unix socket, --kserve-grpc,
// --kserve-http): the daemon accepts each connection itself, notes who is on the other
// end, and only then hands it to the protocol's server. That is how a call learns its client's uid,
// which the shared-memory rules need (docs/kserve.md, "Security"):
// - a Unix socket tells it (SO_PEERCRED);
// - a loopback TCP connection's client socket is in the kernel's table of this
//   network namespace (/proc/net/tcp, /proc/net/tcp6), with its owner's uid;
// - a TCP connection from another machine has no local uid: such clients cannot use
//   shared memory (it would not be theirs anyway).
//
// gRPC serves a handed-over connection under the peer name "fd:<descriptor>"; a peer
// is valid while that descriptor still holds the socket accepted (its inode), so a
// descriptor number reused for a later connection never inherits an identity.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "port/mutex.h"
#include "runtime/core/status.h"

namespace et::server {

// Who is on the other end of a connection.
struct Peer {
  bool local = false;  // on this machine, with `uid` known
  uid_t uid = 0;
  pid_t pid = 0;  // Unix sockets only (0: unknown)
  gid_t gid = 0;  // Unix sockets only: the primary group and the others
  std::vector<gid_t> groups;
  std::string connection;  // "fd:<descriptor>/<inode>": this connection and no later one
  std::string address;     // "unix", or the TCP peer's "host:port"
};

// The peer of a TCP connection seen from the server as `client_addr`:`client_port` ->
// `server_addr`:`server_port` (numeric addresses, as an HTTP library reports them),
// through the kernel's socket tables. `with_process`: also finds the client's process
// (a scan of /proc: for calls that create state that must end with it), naming the
// peer's connection "pid:<pid>/<start time>" ("kept" when the process is not found: a
// client in another PID namespace); else the connection is left empty.
Peer tcp_peer(const std::string& client_addr, int client_port, const std::string& server_addr,
              int server_port, bool with_process);
// Whether the process a "pid:..." connection names still runs.
bool process_alive(const std::string& connection);

class Listener {
 public:
  // Hands an accepted descriptor (non-blocking, close-on-exec) to the protocol's
  // server, which owns it from then on.
  using Serve = std::function<void(int fd)>;

  // Listens on `address`: "unix:PATH" (a Unix socket, mode 0600, a stale one taken
  // over as --socket is), or "HOST:PORT" (TCP; port 0 picks one). InvalidArgument for
  // a malformed address, IoError (naming it) when it cannot be bound.
  // `tcp_shared_memory` false: no TCP client counts as local (see KServeOptions).
  static Result<std::unique_ptr<Listener>> open(const std::string& address, size_t max_connections,
                                                bool tcp_shared_memory = true);
  // Accepts on `listen_fd`, a listening socket made by someone else (systemd's socket
  // activation), owned from now on; its file, if any, is left in place.
  // InvalidArgument when it is not a listening Unix or TCP stream socket.
  static Result<std::unique_ptr<Listener>> adopt(int listen_fd, const std::string& name,
                                                 size_t max_connections,
                                                 bool tcp_shared_memory = true);
  ~Listener();  // stops accepting; removes its Unix socket file (one it bound)

  // Leaves the Unix socket file in place at the end: its owner removes it (the daemon's
  // own socket, which it removes only while it is still the one it bound).
  void keep_file() { unix_path_.clear(); }
  // What log lines call this listener (default "kserve ADDRESS").
  void set_name(std::string name) { name_ = std::move(name); }

  // The port bound, for TCP (useful with port 0); 0 for a Unix socket.
  int port() const { return port_; }
  const std::string& address() const { return address_; }

  // Starts accepting on a thread of its own, each connection handed to `serve`.
  void start(Serve serve);
  void stop();

  // The peer behind a gRPC peer name ("fd:N"). NotFound when the name is not one of
  // this listener's live connections.
  Result<Peer> identify(const std::string& grpc_peer) const;
  // Whether `connection` (a Peer::connection) is still open.
  bool alive(const std::string& connection) const;
  // Forgets connections that have closed (the daemon calls it now and then).
  void sweep();
  // Zero while a connection is open, else how long since the last one closed (as
  // far as sweep() has seen) or since the start.
  std::chrono::steady_clock::duration idle_for() const;

 private:
  Listener() = default;
  void accept_loop();
  std::string log_name() const { return name_.empty() ? "kserve " + address_ : name_; }
  Peer describe(int fd) const;

  std::string address_, unix_path_, name_;  // unix_path_: the file it bound (removed at the end)
  bool is_unix_ = false;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd: wakes the accept loop to end
  int port_ = 0;
  size_t max_connections_ = 0;
  bool tcp_shared_memory_ = true;
  Serve serve_;
  std::thread thread_;

  struct Accepted {
    std::pair<dev_t, ino_t> id;  // the socket's, to tell a reused descriptor number
    Peer peer;
  };
  mutable Mutex mu_;
  std::map<int, Accepted> accepted_ ET_GUARDED_BY(mu_);  // by descriptor
  std::chrono::steady_clock::time_point idle_since_ ET_GUARDED_BY(mu_) =
      std::chrono::steady_clock::now();
};

}  // namespace et::server
