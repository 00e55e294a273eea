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

#include "runtime/status.h"
#include "server/kserve/grpc_service.h"

namespace httplib {
class Server;
}

namespace et::server::kserve {

class HttpKServeService {
 public:
  // Binds `address` ("HOST:PORT"; port 0 picks one) and serves on a thread of its own.
  // IoError when it cannot listen; InvalidArgument for a malformed address.
  static Result<std::unique_ptr<HttpKServeService>> start(KServeState state,
                                                          const std::string& address,
                                                          size_t max_message_bytes);
  ~HttpKServeService();  // stops
  int port() const { return port_; }
  // When the last request arrived (the start, before any).
  std::chrono::steady_clock::time_point last_request() const {
    return std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(last_request_.load(std::memory_order_relaxed)));
  }
  void stop();

 private:
  explicit HttpKServeService(KServeState state);
  void routes();

  KServeState s_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> last_request_{std::chrono::steady_clock::now().time_since_epoch().count()};
};

}  // namespace et::server::kserve
