// et-serverd: the daemon. See --help and docs/protocol.md.
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "runtime/printable.h"
#include "runtime/thread_pool.h"
#include "server/fd_channel.h"
#include "server/grpc_service.h"
#include "server/options.h"
#include "server/unix_socket.h"

namespace {

int run(const et::server::Options& o) {
  using namespace et::server;
  if (o.threads > 0) et::ThreadPool::global().set_threads(o.threads);
  // Every fast-path channel holds its link's descriptor: take the hard limit, not the
  // soft one (often 1024).
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &files);
  }
  ServiceCore core(o.limits, o.socket + ".fd");
  if (!o.models_dir.empty()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(o.models_dir, ec)) {
      if (entry.path().extension() != ".pte") continue;
      const std::string name = entry.path().filename().string();
      // NAME.ptd beside NAME.pte is its external data file (ExecuTorch writes the
      // weights there when exporting with external constants).
      std::filesystem::path data = entry.path();
      data.replace_extension(".ptd");
      std::error_code data_ec;
      const bool has_data = std::filesystem::is_regular_file(data, data_ec);
      et::Status s =
          core.registry().preload(entry.path().string(), name, has_data ? data.string() : "");
      if (!s.ok()) {
        spdlog::error("--models: {} not preloaded: {}", et::printable(name),
                      et::printable(s.to_string()));
      } else {
        spdlog::info("preloaded {}{}", name,
                     has_data ? " with " + data.filename().string() : std::string());
      }
    }
    if (ec) {
      spdlog::error("--models {}: {}", o.models_dir, ec.message());
      return 1;
    }
  }
  if (et::Status s = claim_socket_path(o.socket); !s.ok()) {
    spdlog::error("{}", s.message());
    return 1;
  }
  auto fd_channel = FdChannel::start(o.socket + ".fd", core);
  if (!fd_channel.ok()) {
    spdlog::error("{}", fd_channel.status().message());
    return 1;
  }
  GrpcService service(core);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + o.socket, grpc::InsecureServerCredentials());
  if (!o.listen.empty()) builder.AddListeningPort(o.listen, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<size_t>(o.max_message_bytes, INT32_MAX)));
  builder.SetMaxSendMessageSize(static_cast<int>(std::min<size_t>(o.max_message_bytes, INT32_MAX)));
  builder.RegisterService(&service);
  // Each open session holds a sync-server thread for its stream; calls need their own.
  // Past this, gRPC answers RESOURCE_EXHAUSTED instead of growing without bound.
  grpc::ResourceQuota quota("et-serverd");
  quota.SetMaxThreads(static_cast<int>(std::min<size_t>(
      o.limits.max_sessions + 4 * std::max<size_t>(o.limits.max_concurrent_runs, 16) + 16,
      INT32_MAX)));
  builder.SetResourceQuota(quota);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    spdlog::error("cannot listen on unix:{}{}", o.socket,
                  o.listen.empty() ? "" : " or " + o.listen);
    return 1;
  }
  spdlog::info("et-serverd {} listening on unix:{}{} ({} compute threads)", ServiceCore::version(),
               o.socket, o.listen.empty() ? "" : " and " + o.listen,
               et::ThreadPool::global().threads());

  // SIGTERM/SIGINT were blocked in main() before any thread started; wait for one.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  int signal_number = 0;
  sigwait(&stop, &signal_number);
  spdlog::info("{}: stopping (running calls get {} ms)", strsignal(signal_number),
               o.shutdown_grace_ms);
  core.begin_shutdown();
  service.cancel_sessions();
  if (!service.wait_for_calls(std::chrono::milliseconds(o.shutdown_grace_ms))) {
    spdlog::warn("calls still running after {} ms: cancelling them", o.shutdown_grace_ms);
  }
  server->Shutdown(std::chrono::system_clock::now());
  server->Wait();
  fd_channel->reset();
  std::remove(o.socket.c_str());
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto options = et::server::parse_options(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "et-serverd: %s\n", options.status().message().c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(et::server::usage(), stdout);
    return 0;
  }
  if (options->version) {
    std::printf("et-serverd %s\n", et::server::ServiceCore::version());
    return 0;
  }
  spdlog::set_level(spdlog::level::from_str(options->log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  umask(077);  // sockets readable and writable by this user only
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return run(*options);
}
