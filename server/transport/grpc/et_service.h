// The et protocol's gRPC transport: EtServer's calls onto the protocol's adapter
// (server/transport/etproto/), and sessions' streams onto the core.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include "et_serverd.grpc.pb.h"
#include "port/mutex.h"
#include "server/transport/etproto/et_protocol.h"
#include "server/transport/listener.h"

namespace et::server {

// `status` as gRPC's (its code from rpc_code()).
grpc::Status to_grpc(const Status& status);

// What a session's first message offers besides gRPC.
struct SessionOffer {
  std::string fd_socket;   // the descriptor socket's path (segments, program files)
  bool fast_path = false;  // channels through it (docs/fast_path.md)
};

class GrpcService final : public ::etserver::v1::EtServer::Service {
 public:
  // `local`: the listener of the daemon's Unix socket, which knows each connection's
  // uid (null: every caller counts as remote).
  explicit GrpcService(EtProtocol& protocol, const Listener* local = nullptr,
                       SessionOffer offer = {})
      : protocol_(protocol), core_(protocol.core()), local_(local), offer_(std::move(offer)) {}

  // Ends every open session stream (shutdown): their OpenSession calls return.
  void cancel_sessions();

  // Waits until no unary call is running, at most `grace`; false if some still are.
  // (Shutdown then uses an immediate gRPC deadline: gRPC's own graceful wait also waits
  // for idle clients to answer its GOAWAY, which a client that polls nothing does only
  // on its 5 s backup poll.)
  bool wait_for_calls(std::chrono::milliseconds grace);

  grpc::Status OpenSession(grpc::ServerContext* ctx,
                           grpc::ServerReaderWriter<pb::SessionServerMessage,
                                                    pb::SessionClientMessage>* stream) override;
  grpc::Status LoadProgram(grpc::ServerContext*, const pb::LoadProgramRequest* req,
                           pb::LoadProgramResponse* resp) override;
  grpc::Status ListPrograms(grpc::ServerContext*, const pb::ListProgramsRequest* req,
                            pb::ListProgramsResponse* resp) override;
  grpc::Status DescribeProgram(grpc::ServerContext*, const pb::DescribeProgramRequest* req,
                               pb::DescribeProgramResponse* resp) override;
  grpc::Status UnloadProgram(grpc::ServerContext*, const pb::UnloadProgramRequest* req,
                             pb::UnloadProgramResponse* resp) override;
  grpc::Status VerifyProgram(grpc::ServerContext*, const pb::VerifyProgramRequest* req,
                             pb::VerifyProgramResponse* resp) override;
  grpc::Status StartProfile(grpc::ServerContext*, const pb::StartProfileRequest* req,
                            pb::StartProfileResponse* resp) override;
  grpc::Status StopProfile(grpc::ServerContext*, const pb::StopProfileRequest* req,
                           pb::StopProfileResponse* resp) override;
  grpc::Status LoadMethod(grpc::ServerContext*, const pb::LoadMethodRequest* req,
                          pb::LoadMethodResponse* resp) override;
  grpc::Status DropMethod(grpc::ServerContext*, const pb::DropMethodRequest* req,
                          pb::DropMethodResponse* resp) override;
  grpc::Status SetInputs(grpc::ServerContext*, const pb::SetInputsRequest* req,
                         pb::SetInputsResponse* resp) override;
  grpc::Status Execute(grpc::ServerContext*, const pb::ExecuteRequest* req,
                       pb::ExecuteResponse* resp) override;
  grpc::Status GetOutputs(grpc::ServerContext*, const pb::GetOutputsRequest* req,
                          pb::GetOutputsResponse* resp) override;
  grpc::Status GetAttribute(grpc::ServerContext*, const pb::GetAttributeRequest* req,
                            pb::GetAttributeResponse* resp) override;
  grpc::Status Run(grpc::ServerContext*, const pb::RunRequest* req, pb::RunResponse* resp) override;
  grpc::Status Generate(grpc::ServerContext* ctx, const pb::GenerateRequest* req,
                        grpc::ServerWriter<pb::GenerateResponse>* writer) override;
  grpc::Status DropSegment(grpc::ServerContext*, const pb::DropSegmentRequest* req,
                           pb::DropSegmentResponse* resp) override;
  grpc::Status ServerStatus(grpc::ServerContext*, const pb::ServerStatusRequest* req,
                            pb::ServerStatusResponse* resp) override;

 private:
  class CallCount;  // counts one unary call while it runs

  // Who makes a call: on the Unix socket, its process (refused when the daemon does not
  // serve that user); over TCP, a remote peer.
  Result<SessionOwner> caller(const grpc::ServerContext& ctx) const;
  // Ok when the caller may use the session `token` (Core::check_caller).
  Status check_caller(const grpc::ServerContext& ctx, const std::string& token) const;

  EtProtocol& protocol_;
  Core& core_;
  const Listener* local_;
  const SessionOffer offer_;
  Mutex mu_;
  std::condition_variable idle_;
  std::map<uint64_t, grpc::ServerContext*> open_streams_ ET_GUARDED_BY(mu_);
  int calls_running_ ET_GUARDED_BY(mu_) = 0;
};

}  // namespace et::server
