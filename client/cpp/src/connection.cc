#include "connection.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "autostart.h"
#include "fast_path.h"
#include "proto/protocol_version.h"
#include "proto/socket_trust.h"

namespace etclient {

Session::~Session() {
  if (!stream) return;
  stream->WritesDone();
  (void)stream->Finish();
}

Result<std::shared_ptr<ClientImpl>> ClientImpl::connect(const std::string& socket,
                                                        const Client::Options& options) {
  if (std::string why = et::wire::untrusted_socket(socket); !why.empty()) {
    return Status(StatusCode::kFailedPrecondition, "et-serverd socket: " + why);
  }
  std::shared_ptr<ClientImpl> impl(new ClientImpl());
  impl->socket_ = socket;
  impl->client_name_ = options.client_name;
  impl->reconnect_timeout_ = options.reconnect_timeout;
  const char* forced = std::getenv("ETSERVER_TRANSPORT");
  impl->fast_path_ = options.transport == Transport::kFast &&
                     !(forced != nullptr && std::string(forced) == "grpc");
  impl->spin_ =
      options.spin.count() >= 0 ? options.spin : spin_from_env(std::chrono::microseconds(50));
  const bool spawn = spawn_enabled(options.spawn);
  const SpawnRequest request{socket, options.serverd_path, options.idle_exit};
  impl->spawn_ = spawn;
  impl->spawn_request_ = request;
  if (spawn && !daemon_listens(socket)) {
    if (Status started = ensure_daemon(request); !started.ok()) return started;
  }
  impl->make_channel();
  auto session = impl->open_session(1, std::chrono::milliseconds(0));
  if (!session.ok() && session.status().code() == StatusCode::kUnavailable && spawn) {
    // A daemon that is exiting (--idle-exit) refuses sessions until its socket is gone:
    // start the next one, and retry until it answers.
    const auto deadline = std::chrono::steady_clock::now() + request.timeout;
    while (!session.ok() && session.status().code() == StatusCode::kUnavailable &&
           std::chrono::steady_clock::now() < deadline) {
      if (Status started = ensure_daemon(request); !started.ok()) return started;
      impl->make_channel();  // a fresh channel connects at once, without gRPC's backoff
      session = impl->open_session(1, std::chrono::milliseconds(0));
      if (!session.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (!session.ok() && impl->daemon_protocol_ != et::wire::kProtocolVersion && spawn) {
    // A daemon of another protocol version is not reused: this client's version gets a
    // socket of its own beside it (started if need be), which its peers find the same way.
    impl->socket_ = socket + ".p" + std::to_string(et::wire::kProtocolVersion);
    impl->daemon_protocol_ = et::wire::kProtocolVersion;
    SpawnRequest own = request;
    own.socket = impl->socket_;
    impl->spawn_request_ = own;
    if (Status started = ensure_daemon(own); !started.ok()) return started;
    impl->make_channel();
    session = impl->open_session(1, std::chrono::milliseconds(0));
  }
  if (!session.ok()) return session.status();
  impl->arena_ = std::make_shared<Arena>((*session)->fd_socket, (*session)->token);
  {
    et::MutexLock lock(impl->mu_);
    impl->session_ = std::move(session).value();
  }
  return impl;
}

void ClientImpl::make_channel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  // A restarted daemon is found within ~0.1-1 s, not gRPC's default 1-120 s backoff: a
  // connect to a socket nobody listens on fails at once, and the next try follows
  // 0.1-1 s later. GRPC_ARG_MIN_RECONNECT_BACKOFF_MS is gRPC's minimum connect timeout:
  // how long one attempt may take once the socket has accepted (the daemon's HTTP/2
  // SETTINGS frame). At 100 ms a daemon on a loaded machine missed it and the client's
  // first connect failed; a local daemon that accepted is given 5 s.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  channel_ = grpc::CreateCustomChannel("unix:" + socket_, grpc::InsecureChannelCredentials(), args);
  stub_ = pb::EtServer::NewStub(channel_);
}

Result<std::shared_ptr<Session>> ClientImpl::open_session(uint64_t generation,
                                                          std::chrono::milliseconds wait) {
  // After a restart, keep trying for `wait`: the daemon may still be starting.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    auto session = try_open_session(generation);
    if (session.ok() || std::chrono::steady_clock::now() >= deadline) return session;
    // Waiting on the channel's state (not sleeping) drives its connection attempt: a
    // sync client polls nothing else between calls.
    const grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
    (void)channel_->WaitForStateChange(
        state, std::chrono::system_clock::now() + std::chrono::milliseconds(50));
  }
}

Result<std::shared_ptr<Session>> ClientImpl::try_open_session(uint64_t generation) {
  auto session = std::make_shared<Session>();
  session->generation = generation;
  session->stream = stub_->OpenSession(&session->context);
  pb::SessionClientMessage hello;
  hello.set_client_name(client_name_);
  hello.set_protocol_version(et::wire::kProtocolVersion);
  pb::SessionServerMessage welcome;
  if (!session->stream->Write(hello) || !session->stream->Read(&welcome)) {
    // The call has ended (the daemon answered with a status, or the connection failed):
    // Finish() returns at once with the reason.
    grpc::Status s = session->stream->Finish();
    session->stream.reset();
    if (s.error_code() == grpc::StatusCode::PERMISSION_DENIED) return from_grpc(s);
    return Status(StatusCode::kUnavailable,
                  "cannot open a session with et-serverd on " + socket_ + ": " +
                      (s.error_message().empty() ? "no answer" : s.error_message()) +
                      " (is the daemon running? start it with: et-serverd --socket " + socket_ +
                      ")");
  }
  if (welcome.protocol_version() != et::wire::kProtocolVersion) {
    daemon_protocol_ = welcome.protocol_version();
    session->context.TryCancel();
    (void)session->stream->Finish();
    session->stream.reset();
    return Status(StatusCode::kFailedPrecondition,
                  "et-serverd " + welcome.server_version() + " on " + socket_ +
                      " speaks protocol version " + std::to_string(welcome.protocol_version()) +
                      (welcome.protocol_version() == 0 ? " (older than versioned protocols)" : "") +
                      "; this client speaks version " + std::to_string(et::wire::kProtocolVersion) +
                      ": use a client and a daemon of one release (the etclient wheel carries its "
                      "own et-serverd), or give this client a socket of its own");
  }
  session->token = welcome.session();
  session->daemon_instance = welcome.daemon_instance();
  session->fd_socket = welcome.fd_socket();
  // The daemon names its descriptor socket as it sees it; beside the socket this client
  // reached, the same file may have another path (a daemon in a container, its socket
  // directory mounted elsewhere here; docs/operations.md). PATH.fd beside PATH is the
  // daemon's convention: that one, when it is there.
  if (!session->fd_socket.empty() && access((socket_ + ".fd").c_str(), F_OK) == 0) {
    session->fd_socket = socket_ + ".fd";
  }
  session->fast_path_version = welcome.fast_path_version();
  return session;
}

std::shared_ptr<const Session> ClientImpl::session() const {
  et::MutexLock lock(mu_);
  return session_;
}

Status ClientImpl::reconnect(uint64_t generation) {
  et::MutexLock lock(mu_);  // one reconnect at a time; others wait for it
  if (session_->generation != generation) return Status();
  // Until the deadline, a daemon that does not answer is "not yet": a supervisor is
  // restarting it, or it is between bind() and listen() (connection refused), or its
  // socket is not there yet. A supervisor (systemd's RestartSec is 100 ms) gets a moment
  // to bring it back first; a client that may start the daemon then starts one when none
  // listens (it died, and nobody restarts it), as connect does: processes doing so at
  // once share one. A daemon that listens but does not answer yet is waited for.
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto deadline = start + reconnect_timeout_;
  auto session = open_session(
      generation + 1, spawn_ ? std::min(reconnect_timeout_, kSupervisorGrace) : reconnect_timeout_);
  bool tried_to_start = false;
  Status not_started;
  while (!session.ok() && session.status().code() == StatusCode::kUnavailable) {
    if (spawn_ && !tried_to_start && !daemon_listens(socket_)) {
      tried_to_start = true;
      not_started = ensure_daemon(spawn_request_);
      // At least long enough for the channel's backoff (at most 1 s) to reach it.
      if (not_started.ok()) deadline = std::max(deadline, Clock::now() + kStartedDaemonReach);
    }
    const auto now = Clock::now();
    if (now >= deadline) break;
    session = open_session(generation + 1,
                           std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
  }
  if (!session.ok()) return not_started.ok() ? session.status() : not_started;
  if (Status s = arena_->rebind((*session)->fd_socket, (*session)->token); !s.ok()) return s;
  (*session)->same_daemon = !session_->daemon_instance.empty() &&
                            (*session)->daemon_instance == session_->daemon_instance;
  session_ = std::move(session).value();
  return Status();
}

Status from_grpc(const grpc::Status& s) {
  switch (s.error_code()) {
    case grpc::StatusCode::OK:
      return Status();
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Status(StatusCode::kInvalidArgument, s.error_message());
    case grpc::StatusCode::NOT_FOUND:
      return Status(StatusCode::kNotFound, s.error_message());
    case grpc::StatusCode::UNIMPLEMENTED:
      return Status(StatusCode::kUnimplemented, s.error_message());
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return Status(StatusCode::kResourceExhausted, s.error_message());
    case grpc::StatusCode::OUT_OF_RANGE:
      return Status(StatusCode::kOutOfRange, s.error_message());
    case grpc::StatusCode::FAILED_PRECONDITION:
      return Status(StatusCode::kFailedPrecondition, s.error_message());
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Status(StatusCode::kDeadlineExceeded, s.error_message());
    case grpc::StatusCode::PERMISSION_DENIED:
      return Status(StatusCode::kPermissionDenied, s.error_message());
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::UNAUTHENTICATED:
      return Status(StatusCode::kUnavailable, "et-serverd is unavailable: " + s.error_message());
    default:
      return Status(StatusCode::kInternal, s.error_message());
  }
}

std::string default_socket() { return et::wire::default_socket_path(); }

}  // namespace etclient
