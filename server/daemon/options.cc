#include "server/daemon/options.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <string_view>
#include <vector>

#include "server/daemon/unix_socket.h"
#include "server/transport/grpc/tcp_credentials.h"

namespace et::server {
namespace {

// A flag of the command line: its name, what value it takes, its help, and what it
// does to the options. The --help text is made from this table, so a flag cannot be
// parsed without being documented.
struct Flag {
  const char* name;
  const char* value;  // what it takes ("PATH"); nullptr: nothing
  const char* help;   // one paragraph, wrapped by usage()
  std::function<Status(Options&, const std::string& value)> set;
  bool value_optional = false;  // the value may be left out (--check [ADDRESS])
};

// A setter for a flag whose value is a count.
std::function<Status(Options&, const std::string&)> count(Status (*set)(Options&, uint64_t)) {
  return [set](Options& o, const std::string& value) -> Status {
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size()) {
      return invalid_argument(fmt::format("'{}' is not a non-negative integer", value));
    }
    return set(o, n);
  };
}

const std::vector<Flag>& flags() {
  static const std::vector<Flag> table = {
    {"--socket", "PATH",
     "Unix socket for gRPC (default $ETSERVER_SOCKET, else "
     "$XDG_RUNTIME_DIR/et-serverd.sock, else "
     "/tmp/et-serverd-<uid>/et-serverd.sock, in a private directory made "
     "with mode 0700). Its directory must be writable by you alone. Shared "
     "memory is handed over on PATH.fd beside it. A stale socket file is "
     "replaced; a live daemon's is not.",
     [](Options& o, const std::string& value) -> Status {
      o.socket = value;
      return Status();
    }},
    {"--listen", "HOST:PORT",
     "also serve gRPC over TCP (tensors inline only); off by default. Only "
     "on loopback (127.0.0.1, [::1], localhost) unless TLS is given: a "
     "session's token would cross the network in clear",
     [](Options& o, const std::string& value) -> Status {
      o.listen = value;
      return Status();
    }},
    {"--tls-cert", "FILE",
     "TLS for --listen: the server's certificate chain (PEM)",
     [](Options& o, const std::string& value) -> Status {
      o.tls_cert = value;
      return Status();
    }},
    {"--tls-key", "FILE",
     "and its private key (PEM)",
     [](Options& o, const std::string& value) -> Status {
      o.tls_key = value;
      return Status();
    }},
    {"--tls-client-ca", "FILE",
     "also require clients to present a certificate signed by this CA "
     "(PEM): mutual TLS",
     [](Options& o, const std::string& value) -> Status {
      o.tls_client_ca = value;
      return Status();
    }},
    {"--socket-group", "GROUP",
     "also serve the members of GROUP (a name or number) on the Unix "
     "sockets, which get that group and mode 0660; others are refused. Put "
     "--socket in a directory they can reach (e.g. /run/et-serverd, mode "
     "0750, that group); clients name the daemon's user in "
     "ETSERVER_DAEMON_USER (docs/security.md)",
     [](Options& o, const std::string& value) -> Status {
      ET_ASSIGN_OR_RETURN(gid_t group, find_group(value));
      o.limits.socket_group = group;
      return Status();
    }},
    {"--models", "DIR",
     "the model repository: DIR/NAME.pte (NAME.ptd beside it: its external "
     "data file) and Triton's layout, DIR/NAME/VERSION/model.pte "
     "(model.ptd beside it). Each model's newest version that loads is "
     "served: preloaded for sessions (by file name NAME.pte, or NAME in "
     "Triton's layout) and a KServe model (docs/operations.md)",
     [](Options& o, const std::string& value) -> Status {
      if (value.empty()) return invalid_argument("--models: give a directory");
      o.repository.dir = value;
      return Status();
    }},
    {"--model-control-mode", "MODE",
     "none (default): load every model at start; poll: load every model, "
     "then follow the directory (a new or rewritten file is a new version, "
     "a removed one is unloaded; a file is read once its writer closes "
     "it); explicit: load only --load-model names, then by KServe load and "
     "unload requests",
     [](Options& o, const std::string& value) -> Status {
      ET_ASSIGN_OR_RETURN(o.repository.control, repository::parse_model_control(value));
      return Status();
    }},
    {"--load-model", "NAME",
     "explicit mode: load NAME at start (repeatable; * for all)",
     [](Options& o, const std::string& value) -> Status {
      o.repository.load_at_start.push_back(value);
      return Status();
    }},
    {"--warm-up", "on|off",
     "run each method of a repository model once on zeros before serving it "
     "(before ready at start), so no first call compiles (default on)",
     [](Options& o, const std::string& value) -> Status {
      if (value != "on" && value != "off") return invalid_argument("--warm-up: give on or off");
      o.warm_up = value == "on";
      return Status();
    }},
    {"--repository-poll-secs", "N",
     "poll mode: also read the whole directory every N seconds in case a "
     "change event was lost (default 30; 0: never)",
     count([](Options& o, uint64_t n) -> Status {
      o.repository.rescan = std::chrono::seconds(std::min<uint64_t>(n, uint64_t{1} << 32));
      return Status();
    })},
    {"--kserve-grpc", "ADDRESS",
     "also serve the KServe v2 / Triton gRPC protocol (tritonclient, "
     "perf_analyzer) on ADDRESS: unix:PATH, or HOST:PORT (loopback unless "
     "clients on other machines must reach it); off by default. Models: "
     "the --models programs (docs/kserve.md)",
     [](Options& o, const std::string& value) -> Status {
      if (value.empty()) return invalid_argument("--kserve-grpc: give unix:PATH or HOST:PORT");
      o.kserve.grpc_address = value;
      return Status();
    }},
    {"--kserve-http", "HOST:PORT",
     "also serve the KServe v2 REST protocol (JSON and binary tensors, "
     "tritonclient.http) on HOST:PORT; off by default",
     [](Options& o, const std::string& value) -> Status {
      if (value.empty()) return invalid_argument("--kserve-http: give HOST:PORT");
      o.kserve.http_address = value;
      return Status();
    }},
    {"--kserve-tcp-shared-memory", "on|off",
     "whether KServe clients over TCP on this machine may use shared "
     "memory (default on; off behind a proxy on this machine, where every "
     "remote client would look like the proxy's user)",
     [](Options& o, const std::string& value) -> Status {
      if (value != "on" && value != "off") {
      return invalid_argument("--kserve-tcp-shared-memory: give on or off");
      }
      o.kserve.tcp_shared_memory = value == "on";
      return Status();
    }},
    {"--kserve-instances", "N",
     "method instances per KServe model, calls of one model running in "
     "parallel on them (default: --workers)",
     count([](Options& o, uint64_t n) -> Status {
      o.kserve.max_instances = n;
      return Status();
    })},
    {"--kserve-max-connections", "N",
     "KServe connections open at once (default 1024)",
     count([](Options& o, uint64_t n) -> Status {
      o.kserve.max_connections = n;
      return Status();
    })},
    {"--kserve-max-regions", "N",
     "shared-memory regions one user may register (default 256)",
     count([](Options& o, uint64_t n) -> Status {
      o.kserve.shm.max_regions_per_user = n;
      return Status();
    })},
    {"--kserve-max-region-bytes", "N",
     "bytes of regions one user may register (default 64 GiB)",
     count([](Options& o, uint64_t n) -> Status {
      o.kserve.shm.max_bytes_per_user = n;
      return Status();
    })},
    {"--threads", "N",
     "compute threads (default: ET_NUM_THREADS, else one per physical core "
     "this process may use: affinity and cgroup CPU quota count)",
     count([](Options& o, uint64_t n) -> Status {
      o.threads = n;
      return Status();
    })},
    {"--rt", "POLICY[:PRIO]",
     "run the fast-path channel threads and compute workers at a real-time "
     "policy: fifo or rr, priority 1-99 (default 10); refused at start when "
     "not allowed (docs/operations.md, \"Real-time class\")",
     [](Options& o, const std::string& value) -> Status {
      const std::string error = parse_realtime_class(value, o.realtime);
      return error.empty() ? Status() : invalid_argument(error);
    }},
    {"--rt-cpus", "LIST",
     "and pin them to these CPUs (e.g. 2-3); --threads defaults to their count",
     [](Options& o, const std::string& value) -> Status {
      const std::string error = parse_cpu_list(value, o.realtime.cpus);
      return error.empty() ? Status() : invalid_argument(error);
    }},
    {"--rt-mlock", nullptr,
     "lock the daemon's memory (mlockall) and write method memory at load: no execute "
     "waits on a page fault",
     [](Options& o, const std::string&) {
      o.rt_mlock = true;
      o.limits.prefault_method_memory = true;
      return Status();
    }},
    {"--workers", "N",
     "methods executing at once (default: the thread count)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_concurrent_runs = n;
      return Status();
    })},
    {"--log-level", "LEVEL",
     "trace, debug, info (default), warn, error, off; changed at run time "
     "by SIGUSR1 (one step more verbose, down to trace), SIGUSR2 (back to "
     "LEVEL) or PUT /log-level on --metrics",
     [](Options& o, const std::string& value) -> Status {
      if (spdlog::level::from_str(value) == spdlog::level::off && value != "off") {
      return invalid_argument(
      fmt::format("--log-level {}: give trace, debug, info, warn, error or off", value));
      }
      o.log_level = value;
      return Status();
    }},
    {"--log-format", "FORMAT",
     "text (default) or json: one JSON object per line, with the session "
     "and call a line belongs to (docs/operations.md)",
     [](Options& o, const std::string& value) -> Status {
      if (value != "text" && value != "json") {
      return invalid_argument("--log-format: give text or json");
      }
      o.log_format = value;
      return Status();
    }},
    {"--metrics", "ADDRESS",
     "serve Prometheus metrics on http://ADDRESS/metrics, and the log "
     "level on /log-level (GET, PUT); ADDRESS is HOST:PORT, or PORT for "
     "127.0.0.1 (loopback by default: the page names models)",
     [](Options& o, const std::string& value) -> Status {
      if (value.empty()) return invalid_argument("--metrics: give HOST:PORT or PORT");
      o.metrics_address = value;
      return Status();
    }},
    {"--max-sessions", "N",
     "open sessions at once (default 256)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_sessions = n;
      return Status();
    })},
    {"--max-segment-bytes", "N",
     "shared memory one session may have mapped (default 4 GiB; a dropped "
     "segment counts while an input is still bound to it)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_segment_bytes_per_session = n;
      return Status();
    })},
    {"--max-segments", "N",
     "segments one session may register (default 1024)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_segments_per_session = n;
      return Status();
    })},
    {"--max-program-bytes", "N",
     "largest program accepted (default 2047 MiB)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_program_bytes = n;
      return Status();
    })},
    {"--max-method-bytes", "N",
     "planned memory plus output buffers of one loaded method (default 8 "
     "GiB)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_method_bytes = n;
      return Status();
    })},
    {"--max-message-bytes", "N",
     "largest gRPC message (default 256 MiB)",
     count([](Options& o, uint64_t n) -> Status {
      o.max_message_bytes = n;
      return Status();
    })},
    {"--request-deadline-ms", "N",
     "longest a call waits for a busy method or worker (default 60000)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.request_deadline = std::chrono::milliseconds(n);
      return Status();
    })},
    {"--execution-deadline-ms", "N",
     "longest one execute runs; checked between instructions (default "
     "60000)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.execution_deadline = std::chrono::milliseconds(n);
      return Status();
    })},
    {"--max-instructions", "N",
     "instructions one execute may run, jumps included (default 100000000)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_instructions = std::max<uint64_t>(n, 1);
      return Status();
    })},
    {"--vet", "on|off",
     "try each program a client sends that the daemon has not seen in a "
     "sandboxed child process first (every method loaded and run once on "
     "zeros, under resource limits and seccomp): one that crashes or runs "
     "away there is refused instead of killing the daemon (default on; the "
     "--models programs are the operator's own and are never vetted)",
     [](Options& o, const std::string& value) -> Status {
      if (value != "on" && value != "off") return invalid_argument("--vet: give on or off");
      o.limits.vet = value == "on";
      return Status();
    }},
    {"--max-sessions-per-peer", "N",
     "sessions from one TCP host (default 64)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_sessions_per_peer = n;
      return Status();
    })},
    {"--max-programs", "N",
     "programs one session may hold (default 1024)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_programs_per_session = n;
      return Status();
    })},
    {"--max-program-bytes-per-session", "N",
     "bytes of programs one session may hold (default 8 GiB)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_program_bytes_per_session = n;
      return Status();
    })},
    {"--max-methods", "N",
     "methods one session may hold (default 256)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_methods_per_session = n;
      return Status();
    })},
    {"--max-calls", "N",
     "calls one session may have running or waiting (default 32)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.max_calls_per_session = n;
      return Status();
    })},
    {"--keepalive-ms", "N",
     "ping a gRPC connection (ours and KServe's) idle this long (default "
     "15000)",
     count([](Options& o, uint64_t n) -> Status {
      o.connections.keepalive = std::chrono::milliseconds(std::clamp<uint64_t>(n, 1, INT32_MAX));
      return Status();
    })},
    {"--keepalive-timeout-ms", "N",
     "close a connection whose ping goes unanswered this long, ending its "
     "sessions: a stopped or cut-off client loses its session after "
     "keepalive + timeout (default 20000; at least 6000)",
     count([](Options& o, uint64_t n) -> Status {
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
      return Status();
    })},
    {"--max-streams-per-connection", "N",
     "gRPC calls open at once on one connection (default 128)",
     count([](Options& o, uint64_t n) -> Status {
      o.connections.max_streams = static_cast<int>(std::clamp<uint64_t>(n, 1, INT32_MAX));
      return Status();
    })},
    {"--no-fast-path", nullptr,
     "serve every call over gRPC only (as daemons before the fast path "
     "did; clients then use gRPC)",
     [](Options& o, const std::string&) {
      o.fast_path.enabled = false;
      return Status();
    }},
    {"--max-fast-channels", "N",
     "fast-path channels open at once, each served by a thread (default "
     "512; past it, clients use gRPC)",
     count([](Options& o, uint64_t n) -> Status {
      o.fast_path.max_channels = n;
      return Status();
    })},
    {"--max-fast-channels-per-session", "N",
     "fast-path channels one session may open (default 64)",
     count([](Options& o, uint64_t n) -> Status {
      o.fast_path.max_channels_per_session = n;
      return Status();
    })},
    {"--fast-path-spin-us", "N",
     "how long a fast-path channel polls for the next request before it "
     "sleeps (default 50; 0: sleep at once)",
     count([](Options& o, uint64_t n) -> Status {
      o.fast_path.timing.spin = std::chrono::microseconds(std::min<uint64_t>(n, 1'000'000));
      return Status();
    })},
    {"--fast-path-wake-ahead-us", "N",
     "for a caller at a steady rate, wake this long before its next call "
     "is due and poll until as long after (default 150; 0: never)",
     count([](Options& o, uint64_t n) -> Status {
      o.fast_path.timing.wake_ahead = std::chrono::microseconds(std::min<uint64_t>(n, 10'000));
      return Status();
    })},
    {"--shutdown-grace-ms", "N",
     "on SIGTERM/SIGINT, how long running calls may finish (default 10000)",
     count([](Options& o, uint64_t n) -> Status {
      o.shutdown_grace_ms = static_cast<int>(n);
      return Status();
    })},
    {"--keep-programs-seconds", "N",
     "keep a program loaded N seconds after its last session let it go, so "
     "the next process to load it finds it ready (default 300; 0: unload "
     "at once)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.keep_programs = std::chrono::seconds(std::min<uint64_t>(n, uint64_t{1} << 32));
      return Status();
    })},
    {"--keep-programs-bytes", "N",
     "at most N bytes of programs kept that way (default 1 GiB)",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.keep_programs_bytes = n;
      return Status();
    })},
    {"--idle-exit", "SECONDS",
     "exit cleanly after SECONDS with no session open (default 0: never); "
     "what clients that start the daemon themselves pass",
     count([](Options& o, uint64_t n) -> Status {
      o.limits.idle_exit = std::chrono::seconds(std::min<uint64_t>(n, uint64_t{1} << 32));
      return Status();
    })},
    {"--detach", nullptr,
     "run in the background in a session of its own; the command returns "
     "when the daemon listens (exit 0) or failed to start (exit 1; the "
     "reason is in its log: stdout and stderr)",
     [](Options& o, const std::string&) {
      o.detach = true;
      return Status();
    }},
    {"--check", "ADDRESS",
     "ask the daemon at ADDRESS (a socket path, unix:PATH or HOST:PORT; "
     "default: --socket) whether it is serving, through gRPC's standard "
     "health service; prints SERVING and exits 0, NOT_SERVING and exits 1, "
     "or why not and exits 2",
     [](Options& o, const std::string& value) {
      o.check = true;
      o.check_address = value;
      return Status();
    },
     /*value_optional=*/true},
    {"--version", nullptr,
     "print the version",
     [](Options& o, const std::string&) {
      o.version = true;
      return Status();
    }},
    {"--help", nullptr,
     "print this help",
     [](Options& o, const std::string&) {
      o.help = true;
      return Status();
    }},
  };
  return table;
}

const Flag* find_flag(std::string_view name) {
  if (name == "-h") name = "--help";
  for (const Flag& f : flags()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

// `text` wrapped to `width` columns, its first line starting at column `first`, the
// others indented by `indent`.
std::string wrapped(std::string_view text, size_t first, size_t indent, size_t width) {
  std::string out, line;
  size_t column = first;  // where `line` starts
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    if (!line.empty() && column + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
      column = indent;
    }
    line += line.empty() ? "" : " ";
    line += word;
    start = end + 1;
  }
  return out + line;
}

}  // namespace

const char* usage() {
  static const std::string text = [] {
    constexpr size_t kHelpColumn = 27, kWidth = 89;
    std::string out = R"(usage: et-serverd [options]

Runs ExecuTorch .pte programs for clients that connect over a Unix socket (and,
optionally, TCP). Clients open a session, load programs and methods, and run them
with tensors inline or in shared memory; see docs/protocol.md.

)";
    for (const Flag& f : flags()) {
      std::string left = fmt::format("  {}", f.name);
      if (f.value)
        left += f.value_optional ? fmt::format(" [{}]", f.value) : fmt::format(" {}", f.value);
      size_t first = kHelpColumn;
      if (left.size() + 2 > kHelpColumn + 8) {
        out += left + "\n" + std::string(kHelpColumn, ' ');
      } else {
        first = std::max(kHelpColumn, left.size() + 2);
        out += left + std::string(first - left.size(), ' ');
      }
      out += wrapped(f.help, first, kHelpColumn, kWidth) + "\n";
    }
    return out;
  }();
  return text.c_str();
}

Result<Options> parse_options(int argc, char** argv) {
  Options o;
  o.socket = default_socket_path();
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    const Flag* flag = find_flag(name);
    if (flag == nullptr) return invalid_argument(fmt::format("unknown flag {} (see --help)", name));
    std::string value;
    if (flag->value_optional) {
      if (i + 1 < argc && argv[i + 1][0] != '-') value = argv[++i];
    } else if (flag->value) {
      if (i + 1 >= argc)
        return invalid_argument(fmt::format("{} needs a value (see --help)", name));
      value = argv[++i];
    }
    Status set = flag->set(o, value);
    if (!set.ok()) {
      // Messages that name their flag already keep their own words.
      return set.message().rfind(name, 0) == 0 ? set : set.with_context(name);
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
  if (!o.realtime.cpus.empty() && !o.realtime.on()) {
    return invalid_argument("--rt-cpus goes with --rt fifo|rr (the class its threads enter)");
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
