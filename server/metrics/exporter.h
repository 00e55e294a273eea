// --metrics ADDRESS: a small HTTP server for operators: GET /metrics (Prometheus' text
// format), GET /log-level and PUT /log-level (the daemon's log level, changed at run
// time; docs/operations.md).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "runtime/core/status.h"
#include "server/metrics/metrics.h"

namespace httplib {
class Server;
}

namespace et::server::metrics {

class MetricsServer {
 public:
  // Listens on `address`: HOST:PORT, or PORT alone for 127.0.0.1 (port 0: any free
  // one). InvalidArgument for a bad address; IoError when it cannot be bound.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& address,
                                                      const Metrics& metrics);
  ~MetricsServer();  // stops serving
  int port() const { return port_; }

 private:
  MetricsServer() = default;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
};

// Adds the standard process metrics (process_resident_memory_bytes, process_open_fds,
// process_cpu_seconds_total, ...) read from /proc at each scrape.
void add_process_metrics(Metrics& metrics);

}  // namespace et::server::metrics
