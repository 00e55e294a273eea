#include "server/daemon/options.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "server/daemon/unix_socket.h"

namespace et::server {
namespace {

Result<uint64_t> parse_count(const std::string& flag, const std::string& text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return invalid_argument(fmt::format("{}: '{}' is not a non-negative integer", flag, text));
  }
  return value;
}

}  // namespace

bool is_loopback_address(const std::string& host_port) {
  std::string host = host_port;
  if (const size_t colon = host.rfind(':'); colon != std::string::npos) host.resize(colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8, written as four numbers.
  unsigned a = 0, b = 0, c = 0, d = 0;
  char tail = 0;
  return std::sscanf(host.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 &&
         b < 256 && c < 256 && d < 256;
}

const char* usage() {
  return R"(usage: et-serverd [options]

Runs ExecuTorch .pte programs for clients that connect over a Unix socket (and,
optionally, TCP). Clients open a session, load programs and methods, and run them
with tensors inline or in shared memory; see docs/protocol.md.

  --socket PATH            Unix socket for gRPC (default $ETSERVER_SOCKET, else
                           $XDG_RUNTIME_DIR/et-serverd.sock, else
                           /tmp/et-serverd-<uid>/et-serverd.sock, in a private directory
                           made with mode 0700). Its directory must be writable by you
                           alone. Shared memory is handed over on PATH.fd beside it. A
                           stale socket file is replaced; a live daemon's is not.
  --listen HOST:PORT       also serve gRPC over TCP (tensors inline only); off by default.
                           Only on loopback (127.0.0.1, [::1], localhost) unless TLS is
                           given: a session's token would cross the network in clear
  --tls-cert FILE          TLS for --listen: the server's certificate chain (PEM)
  --tls-key FILE           and its private key (PEM)
  --tls-client-ca FILE     also require clients to present a certificate signed by this
                           CA (PEM): mutual TLS
  --socket-group GROUP     also serve the members of GROUP (a name or number) on the Unix
                           sockets, which get that group and mode 0660; others are
                           refused. Put --socket in a directory they can reach (e.g.
                           /run/et-serverd, mode 0750, that group); clients name the
                           daemon's user in ETSERVER_DAEMON_USER (docs/security.md)
  --models DIR             the model repository: DIR/NAME.pte (NAME.ptd beside it: its
                           external data file) and Triton's layout,
                           DIR/NAME/VERSION/model.pte (model.ptd beside it). Each model's
                           newest version that loads is served: preloaded for sessions
                           (by file name NAME.pte, or NAME in Triton's layout) and a
                           KServe model (docs/operations.md)
  --model-control-mode MODE  none (default): load every model at start; poll: load every
                           model, then follow the directory (a new or rewritten file is a
                           new version, a removed one is unloaded; a file is read once its
                           writer closes it); explicit: load only --load-model names, then
                           by KServe load and unload requests
  --load-model NAME        explicit mode: load NAME at start (repeatable; * for all)
  --repository-poll-secs N  poll mode: also read the whole directory every N seconds in
                           case a change event was lost (default 30; 0: never)
  --kserve-grpc ADDRESS    also serve the KServe v2 / Triton gRPC protocol (tritonclient,
                           perf_analyzer) on ADDRESS: unix:PATH, or HOST:PORT (loopback
                           unless clients on other machines must reach it); off by
                           default. Models: the --models programs (docs/kserve.md)
  --kserve-http HOST:PORT  also serve the KServe v2 REST protocol (JSON and binary tensors,
                           tritonclient.http) on HOST:PORT; off by default
  --kserve-tcp-shared-memory on|off
                           whether KServe clients over TCP on this machine may use shared
                           memory (default on; off behind a proxy on this machine, where
                           every remote client would look like the proxy's user)
  --kserve-instances N     method instances per KServe model, calls of one model running
                           in parallel on them (default: --workers)
  --kserve-max-connections N  KServe connections open at once (default 1024)
  --kserve-max-regions N   shared-memory regions one user may register (default 256)
  --kserve-max-region-bytes N  bytes of regions one user may register (default 64 GiB)
  --threads N              compute threads (default: ET_NUM_THREADS, else one per
                           physical core this process may use: affinity and cgroup
                           CPU quota count)
  --workers N              methods executing at once (default: the thread count)
  --log-level LEVEL        trace, debug, info (default), warn, error, off; changed at run
                           time by SIGUSR1 (one step more verbose, down to trace), SIGUSR2
                           (back to LEVEL) or PUT /log-level on --metrics
  --log-format FORMAT      text (default) or json: one JSON object per line, with the
                           session and call a line belongs to (docs/operations.md)
  --metrics ADDRESS        serve Prometheus metrics on http://ADDRESS/metrics, and the log
                           level on /log-level (GET, PUT); ADDRESS is HOST:PORT, or PORT
                           for 127.0.0.1 (loopback by default: the page names models)
  --max-sessions N         open sessions at once (default 256)
  --max-segment-bytes N    shared memory one session may have mapped (default 4 GiB; a
                           dropped segment counts while an input is still bound to it)
  --max-segments N         segments one session may register (default 1024)
  --max-program-bytes N    largest program accepted (default 2047 MiB)
  --max-method-bytes N     planned memory plus output buffers of one loaded method
                           (default 8 GiB)
  --max-message-bytes N    largest gRPC message (default 256 MiB)
  --request-deadline-ms N  longest a call waits for a busy method or worker (default 60000)
  --execution-deadline-ms N  longest one execute runs; checked between instructions
                           (default 60000)
  --max-instructions N     instructions one execute may run, jumps included (default
                           100000000)
  --vet on|off             try each program a client sends that the daemon has not seen
                           in a sandboxed child process first (every method loaded and
                           run once on zeros, under resource limits and seccomp): one
                           that crashes or runs away there is refused instead of killing
                           the daemon (default on; the --models programs are the
                           operator's own and are never vetted)
  --max-sessions-per-peer N  sessions from one TCP host (default 64)
  --max-programs N         programs one session may hold (default 1024)
  --max-program-bytes-per-session N
                           bytes of programs one session may hold (default 8 GiB)
  --max-methods N          methods one session may hold (default 256)
  --max-calls N            calls one session may have running or waiting (default 32)
  --keepalive-ms N         ping a gRPC connection (ours and KServe's) idle this long
                           (default 15000)
  --keepalive-timeout-ms N  close a connection whose ping goes unanswered this long, ending
                           its sessions: a stopped or cut-off client loses its session
                           after keepalive + timeout (default 20000; at least 6000)
  --max-streams-per-connection N
                           gRPC calls open at once on one connection (default 128)
  --no-fast-path           serve every call over gRPC only (as daemons before the fast
                           path did; clients then use gRPC)
  --max-fast-channels N    fast-path channels open at once, each served by a thread
                           (default 512; past it, clients use gRPC)
  --max-fast-channels-per-session N
                           fast-path channels one session may open (default 64)
  --fast-path-spin-us N    how long a fast-path channel polls for the next request
                           before it sleeps (default 50; 0: sleep at once)
  --fast-path-wake-ahead-us N
                           for a caller at a steady rate, wake this long before its next
                           call is due and poll until as long after (default 150; 0: never)
  --shutdown-grace-ms N    on SIGTERM/SIGINT, how long running calls may finish (default 10000)
  --keep-programs-seconds N  keep a program loaded N seconds after its last session let
                           it go, so the next process to load it finds it ready (default
                           300; 0: unload at once)
  --keep-programs-bytes N  at most N bytes of programs kept that way (default 1 GiB)
  --idle-exit SECONDS      exit cleanly after SECONDS with no session open (default 0:
                           never); what clients that start the daemon themselves pass
  --detach                 run in the background in a session of its own; the command
                           returns when the daemon listens (exit 0) or failed to start
                           (exit 1; the reason is in its log: stdout and stderr)
  --check [ADDRESS]        ask the daemon at ADDRESS (a socket path, unix:PATH or
                           HOST:PORT; default: --socket) whether it is serving, through
                           gRPC's standard health service; prints SERVING and exits 0,
                           NOT_SERVING and exits 1, or why not and exits 2
  --version                print the version
  --help                   print this help
)";
}

Result<Options> parse_options(int argc, char** argv) {
  Options o;
  o.socket = default_socket_path();
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      o.help = true;
      continue;
    }
    if (flag == "--version") {
      o.version = true;
      continue;
    }
    if (flag == "--check") {
      o.check = true;
      if (i + 1 < argc && argv[i + 1][0] != '-') o.check_address = argv[++i];
      continue;
    }
    if (flag == "--detach") {
      o.detach = true;
      continue;
    }
    if (flag == "--no-fast-path") {
      o.fast_path.enabled = false;
      continue;
    }
    if (i + 1 >= argc) return invalid_argument(fmt::format("{} needs a value (see --help)", flag));
    const std::string value = argv[++i];
    if (flag == "--socket") {
      o.socket = value;
    } else if (flag == "--listen") {
      o.listen = value;
    } else if (flag == "--vet") {
      if (value != "on" && value != "off") return invalid_argument("--vet: give on or off");
      o.limits.vet = value == "on";
    } else if (flag == "--tls-cert") {
      o.tls_cert = value;
    } else if (flag == "--tls-key") {
      o.tls_key = value;
    } else if (flag == "--tls-client-ca") {
      o.tls_client_ca = value;
    } else if (flag == "--socket-group") {
      ET_ASSIGN_OR_RETURN(gid_t group, find_group(value));
      o.limits.socket_group = group;
    } else if (flag == "--models") {
      if (value.empty()) return invalid_argument("--models: give a directory");
      o.repository.dir = value;
    } else if (flag == "--model-control-mode") {
      ET_ASSIGN_OR_RETURN(o.repository.control, repository::parse_model_control(value));
    } else if (flag == "--load-model") {
      o.repository.load_at_start.push_back(value);
    } else if (flag == "--kserve-grpc") {
      if (value.empty()) return invalid_argument("--kserve-grpc: give unix:PATH or HOST:PORT");
      o.kserve.grpc_address = value;
    } else if (flag == "--kserve-tcp-shared-memory") {
      if (value != "on" && value != "off") {
        return invalid_argument("--kserve-tcp-shared-memory: give on or off");
      }
      o.kserve.tcp_shared_memory = value == "on";
    } else if (flag == "--kserve-http") {
      if (value.empty()) return invalid_argument("--kserve-http: give HOST:PORT");
      o.kserve.http_address = value;
    } else if (flag == "--log-level") {
      if (spdlog::level::from_str(value) == spdlog::level::off && value != "off") {
        return invalid_argument(
            fmt::format("--log-level {}: give trace, debug, info, warn, error or off", value));
      }
      o.log_level = value;
    } else if (flag == "--log-format") {
      if (value != "text" && value != "json") {
        return invalid_argument("--log-format: give text or json");
      }
      o.log_format = value;
    } else if (flag == "--metrics") {
      if (value.empty()) return invalid_argument("--metrics: give HOST:PORT or PORT");
      o.metrics_address = value;
    } else {
      ET_ASSIGN_OR_RETURN(uint64_t n, parse_count(flag, value));
      if (flag == "--threads") {
        o.threads = n;
      } else if (flag == "--workers") {
        o.limits.max_concurrent_runs = n;
      } else if (flag == "--max-sessions") {
        o.limits.max_sessions = n;
      } else if (flag == "--max-segment-bytes") {
        o.limits.max_segment_bytes_per_session = n;
      } else if (flag == "--max-segments") {
        o.limits.max_segments_per_session = n;
      } else if (flag == "--max-program-bytes") {
        o.limits.max_program_bytes = n;
      } else if (flag == "--max-method-bytes") {
        o.limits.max_method_bytes = n;
      } else if (flag == "--max-message-bytes") {
        o.max_message_bytes = n;
      } else if (flag == "--request-deadline-ms") {
        o.limits.request_deadline = std::chrono::milliseconds(n);
      } else if (flag == "--execution-deadline-ms") {
        o.limits.execution_deadline = std::chrono::milliseconds(n);
      } else if (flag == "--max-instructions") {
        o.limits.max_instructions = std::max<uint64_t>(n, 1);
      } else if (flag == "--max-sessions-per-peer") {
        o.limits.max_sessions_per_peer = n;
      } else if (flag == "--max-programs") {
        o.limits.max_programs_per_session = n;
      } else if (flag == "--max-program-bytes-per-session") {
        o.limits.max_program_bytes_per_session = n;
      } else if (flag == "--max-methods") {
        o.limits.max_methods_per_session = n;
      } else if (flag == "--max-calls") {
        o.limits.max_calls_per_session = n;
      } else if (flag == "--keepalive-ms") {
        o.connections.keepalive = std::chrono::milliseconds(std::clamp<uint64_t>(n, 1, INT32_MAX));
      } else if (flag == "--keepalive-timeout-ms") {
        // Clients' gRPC answers pings on an idle connection only when it polls it, every
        // 5 s: a shorter timeout would end healthy idle sessions.
        if (n < 6000) {
          return invalid_argument(fmt::format(
              "--keepalive-timeout-ms {}: give at least 6000 (idle clients answer pings within "
              "5 s; less would end their sessions)",
              n));
        }
        o.connections.keepalive_timeout =
            std::chrono::milliseconds(std::clamp<uint64_t>(n, 1, INT32_MAX));
      } else if (flag == "--max-streams-per-connection") {
        o.connections.max_streams = static_cast<int>(std::clamp<uint64_t>(n, 1, INT32_MAX));
      } else if (flag == "--max-fast-channels") {
        o.fast_path.max_channels = n;
      } else if (flag == "--max-fast-channels-per-session") {
        o.fast_path.max_channels_per_session = n;
      } else if (flag == "--fast-path-spin-us") {
        o.fast_path.timing.spin = std::chrono::microseconds(std::min<uint64_t>(n, 1'000'000));
      } else if (flag == "--fast-path-wake-ahead-us") {
        o.fast_path.timing.wake_ahead = std::chrono::microseconds(std::min<uint64_t>(n, 10'000));
      } else if (flag == "--shutdown-grace-ms") {
        o.shutdown_grace_ms = static_cast<int>(n);
      } else if (flag == "--keep-programs-seconds") {
        o.limits.keep_programs = std::chrono::seconds(std::min<uint64_t>(n, uint64_t{1} << 32));
      } else if (flag == "--keep-programs-bytes") {
        o.limits.keep_programs_bytes = n;
      } else if (flag == "--kserve-instances") {
        o.kserve.max_instances = n;
      } else if (flag == "--kserve-max-connections") {
        o.kserve.max_connections = n;
      } else if (flag == "--kserve-max-regions") {
        o.kserve.shm.max_regions_per_user = n;
      } else if (flag == "--kserve-max-region-bytes") {
        o.kserve.shm.max_bytes_per_user = n;
      } else if (flag == "--repository-poll-secs") {
        o.repository.rescan = std::chrono::seconds(std::min<uint64_t>(n, uint64_t{1} << 32));
      } else if (flag == "--idle-exit") {
        o.limits.idle_exit = std::chrono::seconds(std::min<uint64_t>(n, uint64_t{1} << 32));
      } else {
        return invalid_argument(fmt::format("unknown flag {} (see --help)", flag));
      }
    }
  }
  if (o.socket.empty()) return invalid_argument("--socket: empty path");
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    return invalid_argument("--tls-cert and --tls-key go together (the certificate and its key)");
  }
  if (!o.tls_client_ca.empty() && o.tls_cert.empty()) {
    return invalid_argument("--tls-client-ca needs --tls-cert and --tls-key");
  }
  if (!o.tls_cert.empty() && o.listen.empty()) {
    return invalid_argument("--tls-cert: TLS is for --listen HOST:PORT; give one");
  }
  if (o.listen.rfind("unix", 0) == 0) {
    return invalid_argument(fmt::format(
        "--listen {}: --listen is for TCP (HOST:PORT); the daemon's Unix socket is --socket",
        o.listen));
  }
  if (!o.listen.empty() && o.tls_cert.empty() && !is_loopback_address(o.listen)) {
    return invalid_argument(fmt::format(
        "--listen {}: not a loopback address, and no TLS: session tokens and tensors would "
        "cross the network in clear. Give --tls-cert and --tls-key (and --tls-client-ca to "
        "require client certificates), or listen on 127.0.0.1 / [::1]",
        o.listen));
  }
  if (o.repository.dir.empty() && (o.repository.control != repository::ModelControl::kNone ||
                                   !o.repository.load_at_start.empty())) {
    return invalid_argument("--model-control-mode and --load-model need --models DIR");
  }
  if (o.repository.control != repository::ModelControl::kExplicit &&
      !o.repository.load_at_start.empty()) {
    return invalid_argument(
        "--load-model goes with --model-control-mode explicit (the other modes load every "
        "model at start)");
  }
  return o;
}

}  // namespace et::server
