#include "server/metrics/exporter.h"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace et::server::metrics {
namespace {

Result<std::pair<std::string, int>> parse_address(const std::string& address) {
  std::string host = "127.0.0.1";
  std::string port_text = address;
  if (const size_t colon = address.rfind(':'); colon != std::string::npos) {
    host = address.substr(0, colon);
    port_text = address.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (host.empty()) host = "127.0.0.1";
  }
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return invalid_argument(
        fmt::format("--metrics '{}': give HOST:PORT, or PORT for 127.0.0.1", address));
  }
  return std::make_pair(host, port);
}

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& address,
                                                            const Metrics& metrics) {
  ET_ASSIGN_OR_RETURN(auto where, parse_address(address));
  auto m = std::unique_ptr<MetricsServer>(new MetricsServer());
  m->http_ = std::make_unique<httplib::Server>();
  m->http_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  m->http_->Get("/metrics", [&metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  m->http_->Get("/log-level", [](const httplib::Request&, httplib::Response& res) {
    const auto name = spdlog::level::to_string_view(spdlog::get_level());
    res.set_content(std::string(name.data(), name.size()) + "\n", "text/plain");
  });
  m->http_->Put("/log-level", [](const httplib::Request& req, httplib::Response& res) {
    // Changing the daemon is for this machine's users, even when the page is served
    // to others (--metrics 0.0.0.0:PORT for a cluster's Prometheus).
    if (req.remote_addr != "127.0.0.1" && req.remote_addr != "::1" &&
        req.remote_addr.rfind("::ffff:127.", 0) != 0) {
      res.status = 403;
      res.set_content("the log level is set from this machine only (loopback)\n", "text/plain");
      return;
    }
    std::string text = req.body;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    const auto level = spdlog::level::from_str(text);
    if (level == spdlog::level::off && text != "off") {
      res.status = 400;
      res.set_content("give one of trace, debug, info, warn, error, critical, off\n", "text/plain");
      return;
    }
    spdlog::set_level(level);
    spdlog::warn("log level set to {} (PUT /log-level)", text);
    res.set_content(text + "\n", "text/plain");
  });
  m->http_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("et-serverd: GET /metrics, GET or PUT /log-level\n", "text/plain");
  });
  if (where.second == 0) {
    m->port_ = m->http_->bind_to_any_port(where.first);
    if (m->port_ <= 0) return io_error(fmt::format("--metrics: cannot listen on {}", address));
  } else {
    if (!m->http_->bind_to_port(where.first, where.second)) {
      return io_error(
          fmt::format("--metrics: cannot listen on {}: in use, or not an address here", address));
    }
    m->port_ = where.second;
  }
  httplib::Server* server = m->http_.get();
  m->thread_ = std::thread([server] { server->listen_after_bind(); });
  // Until it runs, stop() would not stop it (and the destructor would wait for ever).
  for (int i = 0; i < 5000 && !server->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return m;
}

MetricsServer::~MetricsServer() {
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
}

void add_process_metrics(Metrics& metrics) {
  metrics.add_collector([](std::string& out) {
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    std::ifstream statm("/proc/self/statm");
    double pages_virtual = 0, pages_resident = 0;
    statm >> pages_virtual >> pages_resident;
    write_metric(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
                 pages_resident * page);
    write_metric(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
                 pages_virtual * page);
    // /proc/self/stat: fields after the command's closing parenthesis; utime and stime
    // are the 12th and 13th of those, the start time (ticks after boot) the 20th.
    std::ifstream stat_file("/proc/self/stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::vector<std::string> f{std::istream_iterator<std::string>(fields), {}};
    if (f.size() > 19) {
      write_metric(out, "process_cpu_seconds_total", "counter",
                   "Total user and system CPU time spent in seconds.",
                   (std::stod(f[11]) + std::stod(f[12])) / ticks);
      std::ifstream uptime_file("/proc/uptime");
      double uptime = 0;
      uptime_file >> uptime;
      const double boot = static_cast<double>(time(nullptr)) - uptime;
      write_metric(out, "process_start_time_seconds", "gauge",
                   "Start time of the process since unix epoch in seconds.",
                   boot + std::stod(f[19]) / ticks);
    }
    std::error_code ec;
    size_t fds = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ++fds;
    }
    write_metric(out, "process_open_fds", "gauge", "Number of open file descriptors.",
                 static_cast<double>(fds));
    rlimit files{};
    if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
      write_metric(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
                   static_cast<double>(files.rlim_cur));
    }
  });
}

}  // namespace et::server::metrics
