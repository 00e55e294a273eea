// The descriptor socket: a Unix SOCK_SEQPACKET socket beside the gRPC socket through
// which clients hand over memfd segments with SCM_RIGHTS (gRPC cannot carry
// descriptors). The wire format is in docs/protocol.md.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "proto/fd_protocol.h"
#include "runtime/status.h"
#include "server/service_core.h"

namespace et::server {

class FdChannel {
 public:
  // Binds `path` (replacing a stale socket file), and serves it on a thread.
  static Result<std::unique_ptr<FdChannel>> start(const std::string& path, ServiceCore& core);
  ~FdChannel();  // stops serving and removes the socket file

 private:
  FdChannel(int listen_fd, std::string path, ServiceCore& core);
  void serve();

  int listen_fd_;
  int wake_[2] = {-1, -1};  // a pipe that ends serve()
  std::string path_;
  ServiceCore& core_;
  std::thread thread_;
};

}  // namespace et::server
