// The connection behind a Client: one gRPC channel to the daemon's socket, the current
// session (held open by its stream), the shared-memory arena, and reconnection.
//
// A daemon restart ends the session: calls then fail with UNAVAILABLE (no daemon yet)
// or UNAUTHENTICATED (a new daemon that never saw our token). reconnect() opens a new
// session, re-registers every arena segment with it and bumps the generation; programs
// and methods compare their generation with it and re-create themselves (client.cc).
// Thread-safe.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "arena.h"
#include "autostart.h"
#include "et_serverd.grpc.pb.h"
#include "etclient/client.h"
#include "port/mutex.h"
#include "proto/protocol_version.h"

namespace etclient {

namespace pb = ::etserver::v1;

// One session with one daemon process.
struct Session {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<pb::SessionClientMessage, pb::SessionServerMessage>>
      stream;
  std::string token, fd_socket;
  uint64_t generation = 0;
  uint32_t fast_path_version = 0;  // 0: the daemon has no fast path (an older version)
  std::string daemon_instance;     // empty from daemons older than the field
  // Opened by reconnect() with the daemon that ended the previous session (not a new
  // daemon): it ended it, e.g. hearing nothing from this process past its keepalive.
  bool same_daemon = false;
  ~Session();  // ends the stream: the daemon releases what the session held
};

// How long a reconnecting client that may start the daemon waits for a supervisor to
// restart it before starting one itself.
inline constexpr std::chrono::milliseconds kSupervisorGrace{1500};
// How long a client waits at least for the daemon it started to answer.
inline constexpr std::chrono::milliseconds kStartedDaemonReach{2000};

class ClientImpl {
 public:
  // Connects to `socket` and opens the first session.
  static Result<std::shared_ptr<ClientImpl>> connect(const std::string& socket,
                                                     const Client::Options& options);

  pb::EtServer::Stub& stub() { return *stub_; }
  Arena& arena() { return *arena_; }
  const std::shared_ptr<Arena>& arena_ptr() { return arena_; }
  bool reconnects() const { return reconnect_timeout_.count() > 0; }
  // Whether Methods should use the fast path (when the session's daemon has it), and
  // how long its calls poll before sleeping.
  bool wants_fast_path() const { return fast_path_; }
  std::chrono::microseconds spin() const { return spin_; }

  // The session calls should use now.
  std::shared_ptr<const Session> session() const;

  // Replaces the session of `generation` with a new one (waiting up to the reconnect
  // timeout for a daemon to answer; a client that may start the daemon starts one when
  // none listens, as connect does); a no-op if another thread already replaced it.
  Status reconnect(uint64_t generation);

 private:
  ClientImpl() = default;
  // (Re)creates the gRPC channel and stub to socket_.
  void make_channel();
  // Opens a session, trying for up to `wait` while the daemon does not answer.
  Result<std::shared_ptr<Session>> open_session(uint64_t generation,
                                                std::chrono::milliseconds wait);
  Result<std::shared_ptr<Session>> try_open_session(uint64_t generation);

  std::string socket_, client_name_;
  std::chrono::milliseconds reconnect_timeout_{0};
  bool spawn_ = false;  // this client may start the daemon (spawn_request_)
  SpawnRequest spawn_request_;
  // The protocol version of the daemon last answering at socket_ when it differed
  // from this client's (et::wire::kProtocolVersion when they agree).
  uint32_t daemon_protocol_ = et::wire::kProtocolVersion;
  bool fast_path_ = true;
  std::chrono::microseconds spin_{50};
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::EtServer::Stub> stub_;
  std::shared_ptr<Arena> arena_;
  mutable et::Mutex mu_;
  std::shared_ptr<const Session> session_ ET_GUARDED_BY(mu_);
};

// The daemon's status as the client's (UNAUTHENTICATED, an unknown session, becomes
// kUnavailable: both mean the daemon we had a session with is gone).
Status from_grpc(const grpc::Status& status);

// True when a call failed because the session is gone (daemon stopped or restarted, or
// its descriptor socket did not answer): worth a reconnect and one retry.
inline bool session_lost(const Status& status) { return status.code() == StatusCode::kUnavailable; }
inline const Status& status_of(const Status& status) { return status; }
template <typename T>
Status status_of(const Result<T>& result) {
  return result.status();
}

// Runs op(session); when the session was lost and reconnecting is on, reconnects and
// runs it once more. For calls that are safe to repeat (loading, not executing).
template <typename Op>
auto retry_once(ClientImpl& client, Op&& op) -> decltype(op(client.session())) {
  auto session = client.session();
  auto result = op(session);
  if (result.ok() || !session_lost(status_of(result)) || !client.reconnects()) return result;
  if (Status s = client.reconnect(session->generation); !s.ok()) return s;
  return op(client.session());
}

// The socket used when Options::socket is empty: $ETSERVER_SOCKET, else
// $XDG_RUNTIME_DIR/et-serverd.sock, else /tmp/et-serverd-UID/et-serverd.sock.
std::string default_socket();

}  // namespace etclient
