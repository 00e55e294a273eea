// The KServe v2 REST service (--kserve-http HOST:PORT), on cpp-httplib: health,
// server and model metadata, model config, statistics, the repository calls, the
// system and CUDA shared-memory endpoints, and inference with JSON tensors or with
// Triton's binary tensor data extension (Inference-Header-Content-Length). Inference
// goes through the same path as gRPC (infer.h): the HTTP request becomes a
// ModelInferRequest and the response is written back as JSON (and binary).
//
// Errors are {"error": "<message>"} with an HTTP status from the error's kind (400
// for a bad request, 404 for an unknown model or region, 403, 429, 501, 503, 504).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "runtime/core/status.h"
#include "server/kserve/grpc_service.h"

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace et::server::kserve {

class HttpKServeService {
 public:
  // Binds `address` ("HOST:PORT"; port 0 picks one) and serves on a thread of its own.
  // `tcp_shared_memory` false: no client counts as local (--kserve-tcp-shared-memory
  // off, for a daemon behind a proxy on its own machine). IoError when it cannot listen;
  // InvalidArgument for a malformed address.
  static Result<std::unique_ptr<HttpKServeService>> start(KServeState state,
                                                          const std::string& address,
                                                          size_t max_message_bytes,
                                                          bool tcp_shared_memory);
  ~HttpKServeService();  // stops
  int port() const { return port_; }
  // When the last request arrived (the start, before any).
  std::chrono::steady_clock::time_point last_request() const {
    return std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(last_request_.load(std::memory_order_relaxed)));
  }
  void stop();

 private:
  HttpKServeService(KServeState state, bool tcp_shared_memory);
  void routes();
  // Who sent `req` (listener.h's tcp_peer).
  Peer peer_of(const httplib::Request& req, bool with_process) const;

  KServeState s_;
  bool tcp_shared_memory_ = true;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> last_request_{std::chrono::steady_clock::now().time_since_epoch().count()};
};

}  // namespace et::server::kserve
