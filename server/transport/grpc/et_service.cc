#include "server/transport/grpc/et_service.h"

#include <spdlog/spdlog.h>

#include "proto/fast_path.h"
#include "proto/protocol_version.h"
#include "proto/socket_trust.h"
#include "runtime/core/exceptions.h"
#include "runtime/core/printable.h"
#include "server/metrics/call_scope.h"
#include "server/transport/grpc/call_bounds.h"
#include "server/transport/grpc/peer_name.h"
#include "server/transport/rpc_code.h"

namespace et::server {

grpc::Status to_grpc(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(rpc_code(status)), status.message());
}

Result<SessionOwner> GrpcService::caller(const grpc::ServerContext& ctx) const {
  const std::string name = ctx.peer();
  if (local_ == nullptr || name.rfind("fd:", 0) != 0) {
    return SessionOwner::tcp_peer(tcp_host_of(name));  // TCP (--listen)
  }
  auto peer = local_->identify(name);
  if (!peer.ok() || !peer->local) {
    return unavailable("the connection closed, or the daemon cannot tell whose it is");
  }
  et::wire::PeerCredentials cred{peer->uid, peer->gid, peer->pid, peer->groups};
  if (std::string why = et::wire::refused_client(cred, core_.limits().socket_group); !why.empty()) {
    return permission_denied(why);
  }
  return SessionOwner::local_process(peer->uid, peer->pid);
}

Status GrpcService::check_caller(const grpc::ServerContext& ctx, const std::string& token) const {
  ET_ASSIGN_OR_RETURN(SessionOwner who, caller(ctx));
  return core_.check_caller(token, who);
}

void GrpcService::cancel_sessions() {
  MutexLock lock(mu_);
  for (auto& [number, ctx] : open_streams_) ctx->TryCancel();
}

grpc::Status GrpcService::OpenSession(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<pb::SessionServerMessage, pb::SessionClientMessage>* stream) {
  pb::SessionClientMessage hello;
  std::string client_name;
  // The client's first message is optional metadata; the session opens at once.
  auto who = caller(*ctx);
  if (!who.ok()) {
    spdlog::warn("refused a session: {}", who.status().message());
    return to_grpc(who.status());
  }
  auto opened = core_.open_session(ctx->peer(), *who);
  if (!opened.ok()) return to_grpc(opened.status());
  std::shared_ptr<Session> session = *opened;
  {
    MutexLock lock(mu_);
    open_streams_[session->number] = ctx;
  }
  pb::SessionServerMessage welcome;
  welcome.set_session(session->token);
  welcome.set_session_number(session->number);
  welcome.set_fd_socket(offer_.fd_socket);
  welcome.set_server_version(core_.version());
  if (offer_.fast_path && !offer_.fd_socket.empty()) {
    welcome.set_fast_path_version(et::wire::kFastPathVersion);
  }
  welcome.set_protocol_version(et::wire::kProtocolVersion);
  welcome.set_daemon_instance(core_.instance());
  grpc::Status ended = grpc::Status::OK;
  if (stream->Write(welcome)) {
    // The session lives while the client holds the stream; Read() returns false when
    // it closes it, disconnects, dies, or the daemon shuts down.
    while (stream->Read(&hello)) {
      const uint32_t theirs = hello.protocol_version();
      if (theirs != 0 && theirs != et::wire::kProtocolVersion) {
        spdlog::warn("session {}: the client speaks protocol version {}, this daemon {}: ended",
                     session->number, theirs, et::wire::kProtocolVersion);
        ended = grpc::Status(
            grpc::StatusCode::FAILED_PRECONDITION,
            fmt::format("et-serverd {} speaks protocol version {}; the client speaks {}: use a "
                        "client and a daemon of one release",
                        core_.version(), et::wire::kProtocolVersion, theirs));
        break;
      }
    }
  }
  {
    MutexLock lock(mu_);
    open_streams_.erase(session->number);
  }
  core_.close_session(session);
  return ended;
}

class GrpcService::CallCount {
 public:
  explicit CallCount(GrpcService& service) : service_(service) {
    MutexLock lock(service_.mu_);
    ++service_.calls_running_;
  }
  ~CallCount() {
    MutexLock lock(service_.mu_);
    if (--service_.calls_running_ == 0) service_.idle_.notify_all();
  }
  CallCount(const CallCount&) = delete;
  CallCount& operator=(const CallCount&) = delete;

 private:
  GrpcService& service_;
};

bool GrpcService::wait_for_calls(std::chrono::milliseconds grace) {
  MutexLock lock(mu_);
  return lock.wait_for(idle_, grace, [this]() ET_REQUIRES(mu_) { return calls_running_ == 0; });
}

// No exception leaves a handler: gRPC would answer UNKNOWN with no message.
#define ET_UNARY(Name, Call)                                                                 \
  grpc::Status GrpcService::Name(grpc::ServerContext* ctx, const pb::Name##Request* req,     \
                                 pb::Name##Response* resp) {                                 \
    CallCount counted(*this);                                                                \
    metrics::CallScope scope(nullptr, metrics::Transport::kGrpc); /* log ids, not counted */ \
    if (Status s = check_caller(*ctx, req->session()); !s.ok()) return to_grpc(s);           \
    return to_grpc(catch_exceptions("", [&]() -> Status { return Call; }));                  \
  }

// A call of a method: also counted on the metrics page (metrics::CallScope).
#define ET_METHOD_CALL(Name, Call)                                                                 \
  grpc::Status GrpcService::Name(grpc::ServerContext* ctx, const pb::Name##Request* req,           \
                                 pb::Name##Response* resp) {                                       \
    CallCount counted(*this);                                                                      \
    metrics::CallScope scope(&core_.metrics(), metrics::Transport::kGrpc);                         \
    Status allowed = check_caller(*ctx, req->session());                                           \
    const CallBounds bounds = call_bounds_of(*ctx);                                                \
    grpc::Status answer =                                                                          \
        to_grpc(!allowed.ok() ? allowed : catch_exceptions("", [&]() -> Status { return Call; })); \
    scope.set_code(answer.error_code());                                                           \
    return answer;                                                                                 \
  }

ET_UNARY(LoadProgram, protocol_.load_program(*req, *resp))
ET_UNARY(ListPrograms, protocol_.list_programs(*req, *resp))
ET_UNARY(DescribeProgram, protocol_.describe_program(*req, *resp))
ET_UNARY(UnloadProgram, ((void)resp, protocol_.unload_program(*req)))
ET_UNARY(VerifyProgram, protocol_.verify_program(*req, *resp))
ET_UNARY(StartProfile, ((void)resp, protocol_.start_profile(*req)))
ET_UNARY(StopProfile, protocol_.stop_profile(*req, *resp))
ET_UNARY(LoadMethod, protocol_.load_method(*req, *resp))
ET_UNARY(DropMethod, ((void)resp, protocol_.drop_method(*req)))
ET_METHOD_CALL(SetInputs, ((void)resp, protocol_.set_inputs(*req, bounds)))
ET_METHOD_CALL(Execute, protocol_.execute(*req, *resp, bounds))
ET_METHOD_CALL(GetOutputs, protocol_.get_outputs(*req, *resp, bounds))
ET_METHOD_CALL(Run, protocol_.run(*req, *resp, bounds))
ET_METHOD_CALL(GetAttribute, protocol_.get_attribute(*req, *resp, bounds))
ET_UNARY(DropSegment, ((void)resp, protocol_.drop_segment(*req)))
#undef ET_UNARY
grpc::Status GrpcService::ServerStatus(grpc::ServerContext* ctx, const pb::ServerStatusRequest* req,
                                       pb::ServerStatusResponse* resp) {
  CallCount counted(*this);
  return to_grpc(catch_exceptions("", [&] {
    // Counts of everyone's sessions and memory are for local clients (the daemon's user).
    auto who = caller(*ctx);
    const bool show_counts = who.ok() && who->host.empty();
    return protocol_.server_status(*resp, show_counts, req->with_registry());
  }));
}

#undef ET_METHOD_CALL

grpc::Status GrpcService::Generate(grpc::ServerContext* ctx, const pb::GenerateRequest* req,
                                   grpc::ServerWriter<pb::GenerateResponse>* writer) {
  CallCount counted(*this);
  metrics::CallScope scope(&core_.metrics(), metrics::Transport::kGrpc);
  Status allowed = check_caller(*ctx, req->session());
  grpc::Status answer = to_grpc(!allowed.ok() ? allowed : catch_exceptions("", [&]() -> Status {
    return protocol_.generate(*req, [&](const pb::GenerateResponse& reply) {
      return !ctx->IsCancelled() && writer->Write(reply);
    });
  }));
  scope.set_code(answer.error_code());
  return answer;
}

}  // namespace et::server
