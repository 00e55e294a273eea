#include "server/kserve/server.h"

#include <grpcpp/resource_quota.h>
#include <grpcpp/server_posix.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace et::server::kserve {

KServeServer::KServeServer(Core& core, repository::ModelRepository* programs,
                           const KServeOptions& o)
    : models_(core, programs,
              o.max_instances ? o.max_instances : core.limits().max_concurrent_runs),
      system_shm_(o.shm) {}

Result<std::unique_ptr<KServeServer>> KServeServer::start(Core& core,
                                                          repository::ModelRepository* programs,
                                                          const KServeOptions& o) {
  auto k = std::unique_ptr<KServeServer>(new KServeServer(core, programs, o));
  if (!o.grpc_address.empty() || o.activated_grpc_fd >= 0) {
    if (o.activated_grpc_fd >= 0) {
      ET_ASSIGN_OR_RETURN(k->grpc_listener_,
                          Listener::adopt(o.activated_grpc_fd, "kserve (socket activation)",
                                          o.max_connections, o.tcp_shared_memory));
    } else {
      ET_ASSIGN_OR_RETURN(k->grpc_listener_,
                          Listener::open(o.grpc_address, o.max_connections, o.tcp_shared_memory));
    }
    k->grpc_service_ = std::make_unique<GrpcKServeService>(
        KServeState{core, k->models_, k->system_shm_, k->cuda_shm_, k->grpc_listener_.get()});
    grpc::ServerBuilder builder;  // no ports of its own: the listener hands connections over
    const int max_message = static_cast<int>(std::min<size_t>(o.max_message_bytes, INT32_MAX));
    builder.SetMaxReceiveMessageSize(max_message);
    builder.SetMaxSendMessageSize(max_message);
    builder.RegisterService(k->grpc_service_.get());
    builder.RegisterService(&k->health_);
    apply_connection_limits(o.connections, builder);
    // Each open ModelStreamInfer holds a thread; calls need their own. Past this, gRPC
    // answers RESOURCE_EXHAUSTED instead of growing without bound.
    grpc::ResourceQuota quota("et-serverd-kserve");
    quota.SetMaxThreads(static_cast<int>(std::min<size_t>(
        4 * std::max<size_t>(core.limits().max_concurrent_runs, 16) + 64, INT32_MAX)));
    builder.SetResourceQuota(quota);
    k->grpc_server_ = builder.BuildAndStart();
    if (!k->grpc_server_) return internal_error("kserve: the gRPC server did not start");
    grpc::Server* server = k->grpc_server_.get();
    k->grpc_listener_->start([server](int fd) { grpc::AddInsecureChannelFromFd(server, fd); });
    spdlog::info("KServe v2 gRPC listening on {}{}", k->grpc_listener_->address(),
                 k->grpc_port() ? fmt::format(" (port {})", k->grpc_port()) : "");
  }
  if (!o.http_address.empty()) {
    ET_ASSIGN_OR_RETURN(k->http_,
                        HttpKServeService::start(
                            KServeState{core, k->models_, k->system_shm_, k->cuda_shm_, nullptr},
                            o.http_address, o.max_message_bytes, o.tcp_shared_memory));
    spdlog::info("KServe v2 HTTP listening on {} (port {})", o.http_address, k->http_port());
  }
  return k;
}

KServeServer::~KServeServer() {
  shutdown(std::chrono::steady_clock::now() + std::chrono::seconds(1));
}

void KServeServer::set_serving(bool serving) { health_.set_serving(serving); }

std::chrono::steady_clock::duration KServeServer::idle_for() const {
  const auto now = std::chrono::steady_clock::now();
  auto idle = now - started_;
  if (grpc_listener_) idle = std::min(idle, grpc_listener_->idle_for());
  if (http_) idle = std::min(idle, now - http_->last_request());
  return idle;
}

void KServeServer::tick() {
  if (grpc_listener_) grpc_listener_->sweep();
  auto alive = [this](const std::string& c) {
    if (c == "kept") return true;
    if (c.rfind("pid:", 0) == 0) return process_alive(c);
    return grpc_listener_ && grpc_listener_->alive(c);
  };
  system_shm_.sweep(alive);
  cuda_shm_.sweep(alive);
}

void KServeServer::shutdown(std::chrono::steady_clock::time_point watchers_deadline) {
  if (http_) http_->stop();
  if (!grpc_server_) return;
  grpc_listener_->stop();
  grpc_service_->cancel_all();
  health_.stop();
  if (!health_.wait_for_watchers(watchers_deadline)) {
    spdlog::warn("KServe health watchers still open at the stop's deadline");
  }
  grpc_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  grpc_server_->Wait();
  grpc_server_.reset();
}

}  // namespace et::server::kserve
