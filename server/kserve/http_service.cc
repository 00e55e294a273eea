#include "server/kserve/http_service.h"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "runtime/core/half.h"
#include "runtime/core/printable.h"
#include "server/kserve/http_codec.h"
#include "server/kserve/infer.h"
#include "server/metrics/call_scope.h"
#include "server/transport/grpc/et_service.h"

namespace et::server::kserve {
namespace {

using json = nlohmann::json;
constexpr size_t kHttpThreads = 64;

int http_status(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kPermissionDenied:
    case StatusCode::kUnauthenticated:
      return 403;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kNotSupported:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kInternal:
    case StatusCode::kIoError:
      return 500;
    default:
      return 400;
  }
}

void send(httplib::Response& res, const json& body, int status = 200) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void fail(httplib::Response& res, const Status& s) {
  send(res, json{{"error", s.message()}}, http_status(s));
}

std::string group_or_empty(const httplib::Request& req, size_t group) {
  return req.matches.size() > group ? req.matches[group].str() : "";
}

json tensor_list(const std::vector<TensorSpec>& specs) {
  json out = json::array();
  for (const TensorSpec& t : specs) {
    out.push_back({{"name", t.name}, {"datatype", t.datatype}, {"shape", t.shape}});
  }
  return out;
}

json stat_json(const inference::StatisticDuration& d) {
  return {{"count", d.count()}, {"ns", d.ns()}};
}

json statistics_json(const Model& model) {
  inference::ModelStatistics s;
  fill_statistics(model, s);
  const auto& i = s.inference_stats();
  return {{"name", s.name()},
          {"version", s.version()},
          {"last_inference", s.last_inference()},
          {"inference_count", s.inference_count()},
          {"execution_count", s.execution_count()},
          {"inference_stats",
           {{"success", stat_json(i.success())},
            {"fail", stat_json(i.fail())},
            {"queue", stat_json(i.queue())},
            {"compute_input", stat_json(i.compute_input())},
            {"compute_infer", stat_json(i.compute_infer())},
            {"compute_output", stat_json(i.compute_output())},
            {"cache_hit", stat_json(i.cache_hit())},
            {"cache_miss", stat_json(i.cache_miss())}}},
          {"batch_stats", json::array()}};
}

// The model config as Triton's HTTP endpoint writes it: protobuf's JSON with the
// protocol's field names, int64 dims as numbers.
json config_json(const Model& model) {
  inference::ModelConfig config;
  configure(model, config);
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(config, &text, options);
  json j = json::parse(text);
  for (const char* list : {"input", "output"}) {
    for (json& t : j[list]) {
      json dims = json::array();
      for (const json& d : t["dims"]) dims.push_back(std::stoll(d.get<std::string>()));
      t["dims"] = dims;
    }
  }
  return j;
}

}  // namespace

Result<std::unique_ptr<HttpKServeService>> HttpKServeService::start(KServeState state,
                                                                    const std::string& address,
                                                                    size_t max_message_bytes,
                                                                    bool tcp_shared_memory) {
  auto h = std::unique_ptr<HttpKServeService>(new HttpKServeService(state, tcp_shared_memory));
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) {
    return invalid_argument(fmt::format("'{}': give HOST:PORT", address));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  int port = 0;
  try {
    port = std::stoi(address.substr(colon + 1));
  } catch (...) {
    return invalid_argument(fmt::format("'{}': the port is not a number", address));
  }
  h->http_ = std::make_unique<httplib::Server>();
  h->http_->set_payload_max_length(max_message_bytes);
  // Small responses go out at once (no Nagle wait for the client's delayed ACK), and
  // a client keeps its connection for many requests, not cpp-httplib's default of 5.
  h->http_->set_tcp_nodelay(true);
  h->http_->set_keep_alive_max_count(100000);
  // cpp-httplib serves a connection on one pool thread for as long as it is kept
  // alive: the pool bounds the clients served at once (the others queue).
  h->http_->new_task_queue = [] { return new httplib::ThreadPool(kHttpThreads); };
  h->routes();
  if (port == 0) {
    h->port_ = h->http_->bind_to_any_port(host);
    if (h->port_ <= 0) return io_error(fmt::format("cannot listen on {}", address));
  } else {
    if (!h->http_->bind_to_port(host, port)) {
      return io_error(fmt::format("cannot listen on {}: in use, or not an address here", address));
    }
    h->port_ = port;
  }
  httplib::Server* server = h->http_.get();
  h->thread_ = std::thread([server] { server->listen_after_bind(); });
  // Until it runs, stop() would not stop it (and the destructor would wait for ever).
  for (int i = 0; i < 5000 && !server->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return h;
}

HttpKServeService::HttpKServeService(KServeState state, bool tcp_shared_memory)
    : s_(state), tcp_shared_memory_(tcp_shared_memory) {}

Peer HttpKServeService::peer_of(const httplib::Request& req, bool with_process) const {
  Peer p = tcp_peer(req.remote_addr, req.remote_port, req.local_addr, req.local_port,
                    with_process && tcp_shared_memory_);
  if (!tcp_shared_memory_) p.local = false;  // --kserve-tcp-shared-memory off
  return p;
}

HttpKServeService::~HttpKServeService() { stop(); }

void HttpKServeService::stop() {
  cancelled_ = true;
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
}

void HttpKServeService::routes() {
  httplib::Server& h = *http_;
  const std::string model = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";

  h.Get("/v2/health/live",
        [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  h.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) {
    res.status = s_.core.ready() ? 200 : 503;
  });
  h.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    send(res,
         {{"name", "et-serverd"},
          {"version", Core::version()},
          {"extensions",
           {"model_repository", "schedule_policy", "model_configuration", "system_shared_memory",
            "cuda_shared_memory", "binary_tensor_data", "statistics"}}});
  });
  // Statistics first: "/v2/models/stats" is not a model named "stats".
  h.Get(R"(/v2/models/stats)", [this](const httplib::Request&, httplib::Response& res) {
    json all = json::array();
    for (const auto& m : s_.models.ready()) all.push_back(statistics_json(*m));
    send(res, {{"model_stats", all}});
  });
  h.Get(model + "/stats", [this](const httplib::Request& req, httplib::Response& res) {
    auto m = s_.models.find(req.matches[1], group_or_empty(req, 2));
    if (!m.ok()) return fail(res, m.status());
    send(res, {{"model_stats", {statistics_json(**m)}}});
  });
  h.Get(model + "/ready", [this](const httplib::Request& req, httplib::Response& res) {
    res.status = s_.models.find(req.matches[1], group_or_empty(req, 2)).ok() ? 200 : 400;
  });
  h.Get(model + "/config", [this](const httplib::Request& req, httplib::Response& res) {
    auto m = s_.models.find(req.matches[1], group_or_empty(req, 2));
    if (!m.ok()) return fail(res, m.status());
    send(res, config_json(**m));
  });
  h.Get(model, [this](const httplib::Request& req, httplib::Response& res) {
    auto m = s_.models.find(req.matches[1], group_or_empty(req, 2));
    if (!m.ok()) return fail(res, m.status());
    send(res, {{"name", (*m)->name()},
               {"versions", {(*m)->version()}},
               {"platform", "executorch_pte"},
               {"inputs", tensor_list((*m)->inputs())},
               {"outputs", tensor_list((*m)->outputs())}});
  });
  h.Post(model + "/infer", [this](const httplib::Request& req, httplib::Response& res) {
    metrics::CallScope scope(&s_.core.metrics(), metrics::Transport::kKServeHttp);
    auto parsed =
        parse_http_infer(req.body,
                         req.has_header(kHeaderLength)
                             ? std::optional<std::string>(req.get_header_value(kHeaderLength))
                             : std::nullopt,
                         req.matches[1], group_or_empty(req, 2));
    if (!parsed.ok()) {
      scope.set_code(to_grpc(parsed.status()).error_code());
      return fail(res, parsed.status());
    }
    InferContext ic{s_.core,
                    s_.models,
                    s_.system_shm,
                    s_.cuda_shm,
                    [this, &req]() -> Result<Peer> { return peer_of(req, false); },
                    cancelled_,
                    CallBounds{}};
    inference::ModelInferResponse resp;
    Status st = infer(ic, parsed->req, resp);
    scope.set_code(to_grpc(st).error_code());
    if (!st.ok()) return fail(res, st);
    HttpBody body = write_http_infer(*parsed, resp);
    if (body.header_length) res.set_header(kHeaderLength, std::to_string(*body.header_length));
    res.set_content(std::move(body.text), body.content_type);
  });

  h.Post("/v2/repository/index", [this](const httplib::Request& req, httplib::Response& res) {
    bool ready_only = false;
    if (!req.body.empty()) {
      json j = json::parse(req.body, nullptr, false);
      if (j.is_object() && j.contains("ready") && j["ready"].is_boolean()) ready_only = j["ready"];
    }
    json out = json::array();
    for (const auto& e : s_.models.index()) {
      if (ready_only && e.state != "READY") continue;
      json m = {{"name", e.name}, {"state", e.state}};
      if (!e.version.empty()) m["version"] = e.version;
      if (!e.reason.empty()) m["reason"] = e.reason;
      out.push_back(m);
    }
    send(res, out);
  });
  h.Post(R"(/v2/repository/models/([^/]+)/load)",
         [this](const httplib::Request& req, httplib::Response& res) {
           if (!req.body.empty()) {
             json j = json::parse(req.body, nullptr, false);
             if (j.is_object() && j.contains("parameters") && !j["parameters"].empty()) {
               return fail(res, not_supported("load parameters (a config or files sent with the "
                                              "request) are not supported; put NAME.pte in the "
                                              "--models directory and load it by name"));
             }
           }
           if (!peer_of(req, false).local) {
             return fail(
                 res, permission_denied("only clients on this machine may load and unload models"));
           }
           Status st = s_.models.load(req.matches[1]);
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });
  h.Post(R"(/v2/repository/models/([^/]+)/unload)",
         [this](const httplib::Request& req, httplib::Response& res) {
           if (!peer_of(req, false).local) {
             return fail(
                 res, permission_denied("only clients on this machine may load and unload models"));
           }
           Status st = s_.models.unload(req.matches[1]);
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });

  h.Get(R"(/v2/systemsharedmemory(?:/region/([^/]+))?/status)",
        [this](const httplib::Request& req, httplib::Response& res) {
          auto regions = s_.system_shm.list(peer_of(req, false), group_or_empty(req, 1));
          if (!regions.ok()) return fail(res, regions.status());
          json out = json::array();
          for (const auto& r : *regions) {
            out.push_back({{"name", r->name()},
                           {"key", r->key()},
                           {"offset", r->offset()},
                           {"byte_size", r->byte_size()}});
          }
          send(res, out);
        });
  h.Post(R"(/v2/systemsharedmemory/region/([^/]+)/register)",
         [this](const httplib::Request& req, httplib::Response& res) {
           auto j = parse_json_body(req.body);
           if (!j.ok()) return fail(res, j.status());
           if (!j->is_object() || !j->contains("key") || !(*j)["key"].is_string() ||
               !j->contains("byte_size") || !(*j)["byte_size"].is_number_unsigned()) {
             return fail(res, invalid_argument("register needs {\"key\": \"/name\", \"offset\": "
                                               "N, \"byte_size\": N}"));
           }
           const uint64_t offset = j->value("offset", uint64_t{0});
           Status st = s_.system_shm.add(peer_of(req, true), req.matches[1], (*j)["key"], offset,
                                         (*j)["byte_size"].get<uint64_t>());
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });
  h.Post(R"(/v2/systemsharedmemory(?:/region/([^/]+))?/unregister)",
         [this](const httplib::Request& req, httplib::Response& res) {
           Status st = s_.system_shm.remove(peer_of(req, false), group_or_empty(req, 1));
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });
  h.Get(R"(/v2/cudasharedmemory(?:/region/([^/]+))?/status)",
        [this](const httplib::Request& req, httplib::Response& res) {
          auto regions = s_.cuda_shm.list(peer_of(req, false), group_or_empty(req, 1));
          if (!regions.ok()) return fail(res, regions.status());
          json out = json::array();
          for (const auto& r : *regions) {
            out.push_back(
                {{"name", r->name()}, {"device_id", r->device_id}, {"byte_size", r->byte_size()}});
          }
          send(res, out);
        });
  h.Post(R"(/v2/cudasharedmemory/region/([^/]+)/register)",
         [this](const httplib::Request& req, httplib::Response& res) {
           auto j = parse_json_body(req.body);
           if (!j.ok()) return fail(res, j.status());
           std::string handle;
           if (j->is_object() && j->contains("raw_handle") && (*j)["raw_handle"].is_object() &&
               (*j)["raw_handle"].contains("b64") && (*j)["raw_handle"]["b64"].is_string()) {
             const std::string b64 = (*j)["raw_handle"]["b64"];
             // Standard base64 (RFC 4648) decoded by hand: cpp-httplib has an encoder only.
             static const std::string kAlphabet =
                 "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
             uint32_t acc = 0;
             int bits = 0;
             for (char c : b64) {
               if (c == '=') break;
               const size_t v = kAlphabet.find(c);
               if (v == std::string::npos) {
                 return fail(res, invalid_argument("raw_handle.b64 is not base64"));
               }
               acc = (acc << 6) | static_cast<uint32_t>(v);
               bits += 6;
               if (bits >= 8) {
                 bits -= 8;
                 handle.push_back(static_cast<char>((acc >> bits) & 0xff));
               }
             }
           }
           Status st = s_.cuda_shm.add(peer_of(req, true), req.matches[1], handle,
                                       j->value("device_id", int64_t{0}),
                                       j->value("byte_size", uint64_t{0}));
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });
  h.Post(R"(/v2/cudasharedmemory(?:/region/([^/]+))?/unregister)",
         [this](const httplib::Request& req, httplib::Response& res) {
           Status st = s_.cuda_shm.remove(peer_of(req, false), group_or_empty(req, 1));
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });
  h.set_pre_routing_handler([this](const httplib::Request&, httplib::Response&) {
    last_request_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                        std::memory_order_relaxed);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  h.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty()) {
      send(res,
           json{{"error", fmt::format("no such endpoint: {} {} (docs/kserve.md lists them)",
                                      req.method, printable(req.path))}},
           404);
    }
  });
}

}  // namespace et::server::kserve
