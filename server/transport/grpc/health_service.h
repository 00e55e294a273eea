// gRPC's standard health service (grpc.health.v1) as each of the daemon's gRPC servers
// serves it: `et-serverd --check`, grpc_health_probe, Kubernetes' gRPC probes.
//
// Only the overall service ("") is known: Check of any other name answers NOT_FOUND,
// Watch of one answers SERVICE_UNKNOWN and stays open, as gRPC's default service does.
// What the default service cannot do, and why the daemon has its own: end in order.
// When the daemon stops, stop() sends every watcher NOT_SERVING, then ends its stream
// with UNAVAILABLE "et-serverd is stopping", and wait_for_watchers() returns once each
// stream has ended, so the server's shutdown that follows cannot cut a watcher off
// before it has seen the daemon stop (the default service's last update raced gRPC's
// shutdown on a busy machine, and a probe watching saw the stream end unexplained).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <unordered_set>

#include "grpc_health_v1.grpc.pb.h"
#include "port/mutex.h"

namespace et::server {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  using Status = grpc::health::v1::HealthCheckResponse::ServingStatus;

  HealthService() = default;  // NOT_SERVING until set_serving(true)
  HealthService(const HealthService&) = delete;
  HealthService& operator=(const HealthService&) = delete;
  // REQUIRES: the gRPC server it is registered on has shut down (no stream left).
  ~HealthService() override = default;

  // Serving or not; every open Watch is sent the new status. No effect after stop().
  // Thread-safe.
  void set_serving(bool serving);

  // The daemon is stopping: NOT_SERVING from now on, sent to every watcher, each of
  // whose streams then ends with UNAVAILABLE; a Watch that arrives later ends the same
  // way at once. Does not wait. Thread-safe; idempotent.
  void stop();

  // After stop(): true once every Watch stream has ended, false if some were still open
  // at `deadline` (a client that stopped reading; the server's shutdown ends them).
  // Thread-safe.
  bool wait_for_watchers(std::chrono::steady_clock::time_point deadline);

  // How many Watch streams are open (for tests). Thread-safe.
  size_t watchers() const;

  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const grpc::health::v1::HealthCheckRequest* request,
                                  grpc::health::v1::HealthCheckResponse* response) override;
  grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* Watch(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request) override;

 private:
  class Watcher;
  // Sends each watcher what it has not seen yet (or ends its stream once stopping).
  void update_watchers();

  mutable Mutex mu_;
  std::condition_variable watchers_ended_;
  Status status_ ET_GUARDED_BY(mu_) = grpc::health::v1::HealthCheckResponse::NOT_SERVING;
  bool stopping_ ET_GUARDED_BY(mu_) = false;
  std::unordered_set<Watcher*> watchers_ ET_GUARDED_BY(mu_);
};

}  // namespace et::server
