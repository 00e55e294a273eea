// The KServe v2 / Triton front end of the daemon (docs/kserve.md): its model
// repository, the clients' shared-memory regions, and the gRPC service on its own
// listener (--kserve-grpc) and the REST service (--kserve-http), all on the daemon's
// Core.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "server/core/core.h"
#include "server/kserve/cuda_shm.h"
#include "server/kserve/grpc_service.h"
#include "server/kserve/http_service.h"
#include "server/kserve/model_catalog.h"
#include "server/kserve/shm_registry.h"
#include "server/transport/grpc/connection_limits.h"
#include "server/transport/grpc/health_service.h"
#include "server/transport/listener.h"

namespace et::server::kserve {

struct KServeOptions {
  std::string grpc_address;  // --kserve-grpc: "unix:PATH" or "HOST:PORT" (empty: none)
  std::string http_address;  // --kserve-http: "HOST:PORT" (empty: none)
  size_t max_instances = 0;  // method instances per model; 0: one per compute worker
  size_t max_connections = 1024;
  // --kserve-tcp-shared-memory: whether TCP clients on this machine may use shared
  // memory (as their uid). Off for a daemon behind a proxy on its own machine, where
  // every remote client would look like the proxy's user.
  bool tcp_shared_memory = true;
  size_t max_message_bytes = size_t{256} << 20;
  ConnectionLimits connections;  // the daemon's --keepalive-ms and the like
  ShmLimits shm;
  // A listening socket systemd passed for the gRPC service (socket activation), used
  // instead of binding grpc_address (-1: none). Owned by the server once started.
  int activated_grpc_fd = -1;
};

class KServeServer {
 public:
  // Serves the models of `programs` (the daemon's --models repository, or null: none)
  // and starts listening. REQUIRES: `programs` not started yet (its first loads make
  // the models). The listener's errors (the address cannot be bound).
  static Result<std::unique_ptr<KServeServer>> start(Core& core,
                                                     repository::ModelRepository* programs,
                                                     const KServeOptions& o);
  ~KServeServer();

  // The ports bound (0 for a Unix socket or a service not started).
  int grpc_port() const { return grpc_listener_ ? grpc_listener_->port() : 0; }
  int http_port() const { return http_ ? http_->port() : 0; }
  // Housekeeping (the daemon's main loop): forgets closed connections and releases
  // the regions no open connection uses.
  void tick();
  // How long no KServe client has been connected (gRPC) or has sent a request (HTTP):
  // --idle-exit waits for these too.
  std::chrono::steady_clock::duration idle_for() const;
  // What gRPC's health service answers on the KServe gRPC listener (NOT_SERVING from
  // the start until the daemon is ready).
  void set_serving(bool serving);
  // Stops taking connections and calls; running calls stop at their next instruction.
  // Health watchers are sent NOT_SERVING and the end of their streams first, waited for
  // until `watchers_deadline` (the daemon's stop grace; 1 s from now when destroyed).
  void shutdown(std::chrono::steady_clock::time_point watchers_deadline);

 private:
  KServeServer(Core& core, repository::ModelRepository* programs, const KServeOptions& o);

  ModelCatalog models_;
  ShmRegistry system_shm_;
  CudaShmRegistry cuda_shm_;
  std::unique_ptr<Listener> grpc_listener_;
  std::unique_ptr<GrpcKServeService> grpc_service_;
  HealthService health_;  // outlives grpc_server_
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<HttpKServeService> http_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace et::server::kserve
