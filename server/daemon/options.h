// et-serverd's command line.
#pragma once

#include <chrono>
#include <string>

#include "port/realtime.h"
#include "runtime/core/status.h"
#include "server/core/core.h"
#include "server/kserve/server.h"
#include "server/repository/model_repository.h"
#include "server/transport/grpc/connection_limits.h"
#include "server/transport/ring/channels.h"

namespace et::server {

struct Options {
  std::string socket;  // --socket (default: default_socket_path())
  std::string listen;  // --listen HOST:PORT, empty: no TCP
  // --tls-cert, --tls-key, --tls-client-ca: TLS for --listen (PEM files; needed for an
  // address other than loopback). With a client CA, clients must present a certificate
  // it signed.
  std::string tls_cert, tls_key, tls_client_ca;
  // --models DIR (empty: none), --model-control-mode, --load-model,
  // --repository-poll-secs
  repository::RepositoryOptions repository;
  bool warm_up = true;  // --warm-up: run each repository model's methods once before serving
  size_t threads = 0;   // --threads, 0: ET_NUM_THREADS or one per usable physical core
  // --rt POLICY[:PRIORITY], --rt-cpus LIST: the real-time class of the fast-path channel
  // threads and compute workers (off by default); --rt-mlock: memory locked.
  RealtimeClass realtime;
  bool rt_mlock = false;
  std::string log_level = "info";
  std::string log_format = "text";  // --log-format text|json
  std::string metrics_address;      // --metrics ADDRESS (empty: none)
  size_t max_message_bytes = size_t{256} << 20;
  int shutdown_grace_ms = 10'000;
  // --detach: run in the background (own session); the command returns once the
  // daemon listens (exit 0) or has failed to start (exit 1, the reason in its log).
  bool detach = false;
  ServiceLimits limits;
  FastPathOptions fast_path;
  ConnectionLimits connections;  // --keepalive-ms, --keepalive-timeout-ms, --max-streams-...
  kserve::KServeOptions kserve;  // --kserve-*: off while grpc_address is empty
  bool check = false;            // --check [ADDRESS]: ask a running daemon's health, exit
  std::string check_address;     // empty: the --socket path
  bool help = false;
  bool version = false;
};

// Parses argv. InvalidArgument naming the flag on a bad flag or value.
Result<Options> parse_options(int argc, char** argv);

// The --help text.
const char* usage();

}  // namespace et::server
