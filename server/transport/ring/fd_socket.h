// The descriptor socket: a Unix SOCK_SEQPACKET socket beside the gRPC socket through
// which clients hand over memfd segments with SCM_RIGHTS (gRPC cannot carry
// descriptors). The wire format is in docs/protocol.md.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "port/mutex.h"
#include "proto/fd_protocol.h"
#include "runtime/core/status.h"
#include "server/transport/etproto/et_protocol.h"
#include "server/transport/ring/channels.h"

namespace et::server {

class FdSocket {
 public:
  // Binds `path` (replacing a stale socket file), and serves it on a thread.
  static Result<std::unique_ptr<FdSocket>> start(const std::string& path, EtProtocol& protocol,
                                                 FastPathOptions fast_path = {});
  // Serves `listen_fd`, a listening SOCK_SEQPACKET socket made by someone else (systemd's
  // socket activation), owned from now on; its file is left in place.
  static std::unique_ptr<FdSocket> adopt(int listen_fd, EtProtocol& protocol,
                                         FastPathOptions fast_path = {});
  // Stops serving, waits for program loads in flight, and removes the socket file (one
  // it bound).
  ~FdSocket();

 private:
  FdSocket(int listen_fd, std::string path, EtProtocol& protocol, FastPathOptions fast_path);
  void serve();
  // Reads one request and the descriptor with it; replies. False when the peer is gone
  // or does not read its replies (it is then dropped).
  bool handle(int conn);
  bool start_program_load(int conn, const std::string& token, int fd);
  bool open_fast_channel(int conn, const std::string& token, int memfd);

  int listen_fd_;
  int wake_[2] = {-1, -1};  // a pipe that ends serve()
  std::string path_;
  EtProtocol& protocol_;  // what fast-path channels answer with
  Core& core_;
  const FastPathOptions fast_path_;
  std::thread thread_;
  // Connections that are fast-path channels' links, and their channels (serve() only).
  std::map<int, std::weak_ptr<FastChannel>> links_;
  Mutex loads_mu_;
  std::condition_variable loads_done_;
  size_t loads_running_ ET_GUARDED_BY(loads_mu_) = 0;
};

}  // namespace et::server
