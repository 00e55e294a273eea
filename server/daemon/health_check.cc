#include "server/daemon/health_check.h"

#include <grpcpp/grpcpp.h>

#include <cstdio>

#include "grpc_health_v1.grpc.pb.h"

namespace et::server {

int check_health(const std::string& address, std::chrono::milliseconds timeout) {
  std::string target = address;
  if (!target.empty() && (target[0] == '/' || target[0] == '.')) target = "unix:" + target;
  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  const grpc::Status st = stub->Check(&ctx, req, &resp);
  if (!st.ok()) {
    std::printf("et-serverd --check: no answer from %s: %s\n", target.c_str(),
                st.error_message().c_str());
    return 2;
  }
  const bool serving = resp.status() == grpc::health::v1::HealthCheckResponse::SERVING;
  std::printf("%s\n",
              grpc::health::v1::HealthCheckResponse::ServingStatus_Name(resp.status()).c_str());
  return serving ? 0 : 1;
}

}  // namespace et::server
