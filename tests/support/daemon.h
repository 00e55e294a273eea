// End-to-end test helpers: an et-serverd child process on a private socket, and a
// minimal client (gRPC stub, a held session stream, memfd segments) standing in for
// libetclient until the client issues land.
#pragma once

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "et_serverd.grpc.pb.h"
#include "tests/support/fast_test_channel.h"

namespace et::testing {

namespace pb = ::etserver::v1;

// The et-serverd the tests run: $ET_SERVERD_PATH, else the build's.
std::string serverd_path();

// A daemon started for one test, stopped (SIGTERM) and waited for on destruction.
class DaemonProcess {
 public:
  // Starts build/server/et-serverd (ET_SERVERD_PATH) with `args` on a fresh socket
  // in a temporary directory, and waits until it accepts connections.
  explicit DaemonProcess(std::vector<std::string> args = {});
  ~DaemonProcess();

  const std::string& socket() const { return socket_; }
  pid_t pid() const { return pid_; }
  // Sends SIGTERM and returns the exit status (as from waitpid's WEXITSTATUS, or -1).
  int stop();
  // Kills the daemon (SIGKILL: no clean-up, a stale socket file left) and starts a new
  // one on the same socket with the same arguments, as a supervisor would.
  void kill_and_restart();
  void kill_now();  // SIGKILL, no restart
  void start();     // starts it again (after stop() or kill_now()) and waits until it listens
  // Resident set size of the daemon in KiB.
  long rss_kb() const;
  // The daemon's log so far.
  std::string log() const;

 private:
  std::string dir_, socket_, log_path_;
  std::vector<std::string> argv_;
  pid_t pid_ = -1;
};

class TestClient {
 public:
  // Connects to the Unix socket `socket`, or to `tcp_address` (HOST:PORT) when given.
  explicit TestClient(const std::string& socket, const std::string& tcp_address = "");
  ~TestClient();  // closes the session

  pb::EtServer::Stub& stub() { return *stub_; }
  const std::string& session() const { return session_; }
  const std::string& fd_socket() const { return fd_socket_; }
  bool connected() const { return !session_.empty(); }

  // A sealed memfd of `bytes` bytes registered with the daemon; returns its id and
  // keeps the fd (for writing through `data`). On failure returns 0 and sets `error`.
  struct Segment {
    uint64_t id = 0;
    int fd = -1;
    uint8_t* data = nullptr;
    size_t size = 0;
    std::string error;
  };
  Segment create_segment(size_t bytes, bool seal = true);
  // Sends a descriptor on the descriptor socket (kind: 1 segment, 2 program file);
  // returns the reply's code and its id (as text) or error message.
  std::pair<uint32_t, std::string> register_fd(int fd, const std::string& token, uint16_t kind = 1);

  // Loads `path`'s bytes inline (with `data_path`'s, its .ptd, unless empty); returns
  // the program id (0 and `error` on failure).
  uint64_t load_program_file(const std::string& path, std::string* error = nullptr,
                             const std::string& data_path = {});
  uint64_t load_method(uint64_t program, const std::string& name, std::string* error = nullptr);

  void close_session();

  // A method's calls, over a fast-path channel (opened on first use) unless
  // $ETSERVER_TRANSPORT is "grpc" or the connection is TCP; either way the daemon's
  // answer as gRPC gives it. Tests use these so that they run on both transports.
  grpc::Status run(const pb::RunRequest& req, pb::RunResponse* resp);
  grpc::Status set_inputs(const pb::SetInputsRequest& req, pb::SetInputsResponse* resp);
  grpc::Status execute(const pb::ExecuteRequest& req, pb::ExecuteResponse* resp);
  grpc::Status get_outputs(const pb::GetOutputsRequest& req, pb::GetOutputsResponse* resp);
  bool uses_fast_path() const { return fast_path_; }
  // The channel those calls use (opening it if needed), or null with gRPC.
  FastTestChannel* fast_channel();

 private:
  template <typename Req, typename Resp, typename Rpc>
  grpc::Status call(et::wire::FastCall kind, const Req& req, Resp* resp, Rpc rpc);

  bool fast_path_ = false;
  std::unique_ptr<FastTestChannel> fast_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::EtServer::Stub> stub_;
  grpc::ClientContext session_ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<pb::SessionClientMessage, pb::SessionServerMessage>>
      stream_;
  std::string session_, fd_socket_;
  std::vector<Segment> segments_;
};

// An .npy file as a protocol tensor (inline bytes).
pb::Tensor npy_tensor(const std::string& path);
// Float32 or any dtype: bytes of a tensor value returned inline.
std::vector<uint8_t> tensor_bytes(const pb::Tensor& t);

}  // namespace et::testing
