// et-serverd: the daemon. See --help and docs/protocol.md.
#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/server_posix.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>
#include <thread>

#include "port/realtime.h"
#include "proto/spawn_lock.h"
#include "runtime/core/printable.h"
#include "runtime/core/thread_pool.h"
#include "server/daemon/activation.h"
#include "server/daemon/daemon_metrics.h"
#include "server/daemon/health_check.h"
#include "server/daemon/log_format.h"
#include "server/daemon/options.h"
#include "server/daemon/unix_socket.h"
#include "server/kserve/server.h"
#include "server/metrics/exporter.h"
#include "server/transport/grpc/et_service.h"
#include "server/transport/grpc/health_service.h"
#include "server/transport/grpc/tcp_credentials.h"
#include "server/transport/ring/fd_socket.h"

namespace {

// Waits for SIGTERM/SIGINT, or with --idle-exit for that long without a session.
// Returns holding `lock` where it could take it (see spawn_lock.h), and the reason.
std::string wait_for_stop(const et::server::Options& o, et::server::Core& core,
                          et::server::kserve::KServeServer* kserve, et::wire::SpawnLock& lock) {
  using namespace std::chrono;
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGUSR1);
  sigaddset(&stop, SIGUSR2);
  // These were blocked in main() before any thread started.
  milliseconds tick =
      o.limits.idle_exit.count() > 0
          ? std::clamp<milliseconds>(duration_cast<milliseconds>(o.limits.idle_exit) / 4,
                                     milliseconds(50), milliseconds(1000))
          : milliseconds(1000);
  // systemd's watchdog (WatchdogSec=): pinged from this loop, at half its interval.
  const microseconds watchdog = et::server::watchdog_interval();
  if (watchdog.count() > 0) {
    tick =
        std::clamp<milliseconds>(duration_cast<milliseconds>(watchdog / 2), milliseconds(10), tick);
  }
  while (true) {
    if (watchdog.count() > 0) et::server::notify_service_manager("WATCHDOG=1");
    const timespec wait{static_cast<time_t>(tick.count() / 1000),
                        static_cast<long>(tick.count() % 1000) * 1'000'000};
    const int signal_number = sigtimedwait(&stop, nullptr, &wait);
    core.tick();
    if (kserve) kserve->tick();
    if (signal_number == SIGUSR1 || signal_number == SIGUSR2) {
      // SIGUSR1: one step more verbose (down to trace); SIGUSR2: back to --log-level.
      const auto now = spdlog::get_level();
      const auto next = signal_number == SIGUSR2 ? spdlog::level::from_str(o.log_level)
                        : now > spdlog::level::trace
                            ? static_cast<spdlog::level::level_enum>(now - 1)
                            : now;
      spdlog::set_level(next);
      const auto name = spdlog::level::to_string_view(next);
      spdlog::warn("log level set to {} ({})", std::string_view(name.data(), name.size()),
                   signal_number == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
      continue;
    }
    if (signal_number > 0) {
      // A client may be starting a daemon on this path: let it finish first (bounded).
      (void)lock.lock_for(milliseconds(2000));
      return strsignal(signal_number);
    }
    // Without a lock file to take (it could not be opened: logged at start), the idle
    // exit goes ahead unguarded rather than never.
    if (o.limits.idle_exit.count() > 0 && core.idle_for() >= o.limits.idle_exit &&
        (!kserve || kserve->idle_for() >= o.limits.idle_exit) &&
        (lock.try_lock() || !lock.error().empty())) {
      if (core.begin_shutdown_if_idle()) {
        return fmt::format("no session for {} s (--idle-exit)", o.limits.idle_exit.count());
      }
      lock.unlock();
    }
  }
}

// The real-time class of --rt, --rt-cpus and --rt-mlock, tried on a thread of its own
// before any thread that enters it starts. Empty, or why not and what allows it.
// Whether the effective capabilities hold CAP_IPC_LOCK (lock any amount of memory).
bool can_lock_any_memory() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0) {
      return (std::stoull(line.substr(7), nullptr, 16) >> 14 & 1) != 0;  // CAP_IPC_LOCK
    }
  }
  return false;
}

std::string start_realtime_class(const et::server::Options& o) {
  if (o.rt_mlock) {
    // Every later mapping (a program, a session's segment, a thread's stack) is locked
    // too and counts against the limit: under a finite one the daemon would start, then
    // fail to load a model. So refuse now.
    rlimit limit{};
    getrlimit(RLIMIT_MEMLOCK, &limit);
    const std::string allow =
        "allow it with LimitMEMLOCK=infinity in a systemd unit, `ulimit -l unlimited`, "
        "`--ulimit memlock=-1` for a container, or CAP_IPC_LOCK";
    if (limit.rlim_cur != RLIM_INFINITY && !can_lock_any_memory()) {
      return fmt::format(
          "--rt-mlock: RLIMIT_MEMLOCK is {} bytes: every mapping the daemon makes later "
          "would count against it and fail past it; {}",
          limit.rlim_cur, allow);
    }
    if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0) {
      return fmt::format("--rt-mlock: mlockall: {}; {}", std::strerror(errno), allow);
    }
  }
  if (!o.realtime.on()) return {};
  int error = 0;
  std::thread([&] { error = et::enter_realtime_class(o.realtime); }).join();
  if (error != 0) return "--rt: " + et::realtime_refusal(o.realtime, error);
  et::set_process_realtime_class(o.realtime);
  return {};
}

int run(const et::server::Options& o, int ready_fd) {
  using namespace et::server;
  if (const std::string refused = start_realtime_class(o); !refused.empty()) {
    spdlog::error("{}", refused);
    return 2;
  }
  // Compute workers enter the real-time class as they start (the pool is made here or
  // at its first use, after the class is set): one per --rt-cpus CPU by default.
  size_t threads = o.threads;
  if (threads == 0 && o.realtime.on()) threads = o.realtime.cpus.size();
  if (threads > 0) et::ThreadPool::global().set_threads(threads);
  // Every fast-path channel holds its link's descriptor: take the hard limit, not the
  // soft one (often 1024).
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &files);
  }
  // Sockets systemd made (deploy/systemd/et-serverd.socket) stand in for binding them.
  auto activated = take_activated_sockets();
  if (!activated.ok()) {
    spdlog::error("{}", activated.status().message());
    return 1;
  }
  ServiceLimits limits = o.limits;
  limits.vet_binary = "/proc/self/exe";  // the child runs this very binary, even if replaced
  Core core(limits);
  EtProtocol et_protocol(core);  // the et protocol, over gRPC and the fast path
  // The model repository is read once the daemon listens (health answers NOT_SERVING
  // meanwhile, and sessions asking for a preloaded name wait for it).
  std::unique_ptr<repository::ModelRepository> programs;
  if (!o.repository.dir.empty()) {
    repository::RepositoryOptions ro = o.repository;
    if (o.warm_up) {
      ro.warm_up = [&core](const std::string& model, const SharedProgram& program) {
        (void)core.warm_up(model, program);
      };
    }
    auto opened = repository::ModelRepository::open(core.shared_programs(), std::move(ro));
    if (!opened.ok()) {
      spdlog::error("{}", opened.status().message());
      return 1;
    }
    programs = std::move(opened).value();
  }
  if (activated->grpc < 0) {
    if (et::Status s = claim_socket_path(o.socket); !s.ok()) {
      spdlog::error("{}", s.message());
      return 1;
    }
  }
  auto fd_socket = activated->fd >= 0 ? et::Result<std::unique_ptr<FdSocket>>(FdSocket::adopt(
                                            activated->fd, et_protocol, o.fast_path))
                                      : FdSocket::start(o.socket + ".fd", et_protocol, o.fast_path);
  if (!fd_socket.ok()) {
    spdlog::error("{}", fd_socket.status().message());
    return 1;
  }
  // The Unix socket: the daemon accepts its connections itself, learning each one's uid
  // (SO_PEERCRED: sessions are their user's, --socket-group admits a group), and hands
  // them to gRPC. systemd's socket when socket-activated.
  auto opened_local =
      activated->grpc >= 0
          ? Listener::adopt(activated->grpc, "unix:" + o.socket, o.limits.max_sessions + 64)
          : Listener::open("unix:" + o.socket, o.limits.max_sessions + 64);
  if (!opened_local.ok()) {
    spdlog::error("{}", opened_local.status().message());
    return 1;
  }
  std::unique_ptr<Listener> local = std::move(opened_local).value();
  local->set_name("unix:" + o.socket);
  if (activated->grpc < 0) local->keep_file();  // removed at the end, only if still ours
  if (o.limits.socket_group >= 0) {
    for (const auto& [path, ours] : {std::pair{o.socket, activated->grpc < 0},
                                     std::pair{o.socket + ".fd", activated->fd < 0}}) {
      if (ours) {  // systemd's sockets get their group from the unit (SocketGroup=)
        if (et::Status s = share_socket_with_group(path, static_cast<gid_t>(o.limits.socket_group));
            !s.ok()) {
          spdlog::error("{}", s.message());
          return 1;
        }
      }
    }
  }
  auto credentials = tcp_credentials(o.tls_cert, o.tls_key, o.tls_client_ca);
  if (!credentials.ok()) {
    spdlog::error("{}", credentials.status().message());
    return 1;
  }
  GrpcService service(et_protocol, local.get(), {o.socket + ".fd", o.fast_path.enabled});
  // gRPC's standard health service (grpc.health.v1: `et-serverd --check`,
  // grpc_health_probe) and server reflection (grpcurl) on every gRPC server the daemon
  // runs. Health answers NOT_SERVING until the model repository has loaded what it
  // loads at start, SERVING then, NOT_SERVING again from the moment the daemon stops.
  HealthService health;  // outlives `server`
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int listen_port = 0;  // the port --listen got (the kernel's choice for port 0)
  if (!o.listen.empty()) builder.AddListeningPort(o.listen, *credentials, &listen_port);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<size_t>(o.max_message_bytes, INT32_MAX)));
  builder.SetMaxSendMessageSize(static_cast<int>(std::min<size_t>(o.max_message_bytes, INT32_MAX)));
  builder.RegisterService(&service);
  builder.RegisterService(&health);
  apply_connection_limits(o.connections, builder);
  // Each open session holds a sync-server thread for its stream; calls need their own.
  // Past this, gRPC answers RESOURCE_EXHAUSTED instead of growing without bound.
  grpc::ResourceQuota quota("et-serverd");
  quota.SetMaxThreads(static_cast<int>(std::min<size_t>(
      o.limits.max_sessions + 4 * std::max<size_t>(o.limits.max_concurrent_runs, 16) + 16,
      INT32_MAX)));
  builder.SetResourceQuota(quota);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    spdlog::error("the gRPC server did not start{}",
                  o.listen.empty() ? ""
                                   : " (cannot listen on " + o.listen +
                                         (o.tls_cert.empty() ? ""
                                                             : ", or the TLS files are not a "
                                                               "certificate and its key") +
                                         ")");
    return 1;
  }
  {
    grpc::Server* s = server.get();
    local->start([s](int fd) { grpc::AddInsecureChannelFromFd(s, fd); });
  }
  // On every way out from here, no connection is handed to a server already gone.
  struct StopAccepting {
    Listener& listener;
    ~StopAccepting() { listener.stop(); }
  } stop_accepting{*local};
  spdlog::info(
      "et-serverd {} listening on unix:{}{}{}{} ({} compute threads{})", Core::version(), o.socket,
      o.limits.socket_group >= 0
          ? fmt::format(" (uid {} and group {})", getuid(), o.limits.socket_group)
          : "",
      o.listen.empty() ? ""
                       : fmt::format(" and {} (port {}){}", o.listen, listen_port,
                                     o.tls_cert.empty() ? "" : " (TLS)"),
      activated->any() ? " (sockets from systemd)" : "", et::ThreadPool::global().threads(),
      o.realtime.on() ? "; real-time class " + o.realtime.describe() : std::string());

  std::unique_ptr<kserve::KServeServer> kserve;
  if (!o.kserve.grpc_address.empty() || !o.kserve.http_address.empty() || activated->kserve >= 0) {
    kserve::KServeOptions ko = o.kserve;
    ko.max_message_bytes = o.max_message_bytes;
    ko.connections = o.connections;
    ko.activated_grpc_fd = activated->kserve;
    auto started = kserve::KServeServer::start(core, programs.get(), ko);
    if (!started.ok()) {
      spdlog::error("--kserve-grpc/--kserve-http: {}", started.status().message());
      return 1;
    }
    kserve = std::move(started).value();
  }

  // The socket this daemon listens on: at exit it removes that one only, not one a
  // successor put at the same path meanwhile.
  struct stat bound {};
  // (A socket systemd made stays: it is systemd's.)
  const bool have_bound = activated->grpc < 0 && stat(o.socket.c_str(), &bound) == 0;
  et::wire::SpawnLock lock(o.socket);
  if (!lock.error().empty() && activated->grpc < 0) {  // systemd serialises its starts
    spdlog::warn("{}: starting and stopping daemons on this socket is not serialised",
                 lock.error());
  }
  metrics::add_process_metrics(core.metrics());
  metrics::add_daemon_metrics(core, programs.get());
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  if (!o.metrics_address.empty()) {
    auto started = metrics::MetricsServer::start(o.metrics_address, core.metrics());
    if (!started.ok()) {
      spdlog::error("{}", started.status().message());
      return 1;
    }
    metrics_server = std::move(started).value();
    spdlog::info("metrics on http://{}/metrics (port {})", o.metrics_address,
                 metrics_server->port());
  }
  if (programs) {
    if (et::Status s = programs->start(); !s.ok()) {
      spdlog::error("{}", s.message());
      return 1;
    }
  }
  core.set_ready(true);
  spdlog::info("ready ({} models served)", programs ? programs->served_count() : 0);
  notify_service_manager(fmt::format("READY=1\nSTATUS=serving {} models on {}",
                                     programs ? programs->served_count() : 0, o.socket));
  health.set_serving(true);
  if (kserve) kserve->set_serving(true);
  core.restart_idle_clock();
  if (ready_fd >= 0) {  // --detach: the command that started us may return now
    (void)!write(ready_fd, "1", 1);
    close(ready_fd);
  }
  const std::string reason = wait_for_stop(o, core, kserve.get(), lock);
  spdlog::info("{}: stopping (running calls get {} ms)", reason, o.shutdown_grace_ms);
  notify_service_manager("STOPPING=1\nSTATUS=stopping: " + reason);
  const auto stop_began = std::chrono::steady_clock::now();
  health.stop();
  if (kserve) kserve->set_serving(false);
  core.begin_shutdown();
  if (programs) programs->stop_following();
  service.cancel_sessions();
  if (kserve) kserve->shutdown(stop_began + std::chrono::milliseconds(o.shutdown_grace_ms));
  if (!service.wait_for_calls(std::chrono::milliseconds(o.shutdown_grace_ms))) {
    spdlog::warn("calls still running after {} ms: cancelling them", o.shutdown_grace_ms);
  }
  local->stop();
  // Every health watcher has been sent NOT_SERVING and its stream's end before the
  // server cancels what is left.
  if (!health.wait_for_watchers(stop_began + std::chrono::milliseconds(o.shutdown_grace_ms))) {
    spdlog::warn("health watchers still open after {} ms", o.shutdown_grace_ms);
  }
  server->Shutdown(std::chrono::system_clock::now());
  server->Wait();
  fd_socket->reset();
  if (struct stat now{}; have_bound && stat(o.socket.c_str(), &now) == 0 &&
                         now.st_dev == bound.st_dev && now.st_ino == bound.st_ino) {
    std::remove(o.socket.c_str());
  }
  spdlog::info("stopped");
  return 0;  // `lock` is released as it goes
}

}  // namespace

int main(int argc, char** argv) {
  // The sandboxed child that tries a program first (--vet, server/core/vetting/vetting.h).
  if (argc >= 2 && std::string_view(argv[1]) == "--vet-child") {
    // _exit: no exit handlers (a leak checker's would need what the sandbox forbids).
    _exit(et::server::vet_child_main(argc, argv));
  }
  auto options = et::server::parse_options(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "et-serverd: %s\n", options.status().message().c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(et::server::usage(), stdout);
    return 0;
  }
  if (options->check) {
    return et::server::check_health(
        options->check_address.empty() ? options->socket : options->check_address,
        std::chrono::seconds(5));
  }
  if (options->version) {
    std::printf("et-serverd %s\n", et::server::Core::version());
    return 0;
  }
  int ready_fd = -1;
  if (options->detach) {
    // Before any thread exists: the parent waits for the daemon to listen (a byte on
    // the pipe) or to fail (the pipe closes empty), and answers with its exit status.
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) {
      std::perror("et-serverd: --detach: pipe");
      return 1;
    }
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("et-serverd: --detach: fork");
      return 1;
    }
    if (pid > 0) {
      close(ready[1]);
      char byte = 0;
      ssize_t n;
      do {
        n = read(ready[0], &byte, 1);
      } while (n < 0 && errno == EINTR);
      if (n == 1) return 0;
      std::fprintf(stderr, "et-serverd: the daemon did not start; its log says why\n");
      return 1;
    }
    close(ready[0]);
    setsid();  // no controlling terminal; not in the caller's process group
    ready_fd = ready[1];
  }
  spdlog::set_level(spdlog::level::from_str(options->log_level));
  et::server::set_log_format(options->log_format);
  umask(077);  // sockets readable and writable by this user only
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGUSR1);  // the log level, changed at run time (wait_for_stop)
  sigaddset(&stop, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return run(*options, ready_fd);
}
