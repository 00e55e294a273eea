#include "server/kserve/http_service.h"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "runtime/half.h"
#include "runtime/printable.h"
#include "server/kserve/infer.h"

namespace et::server::kserve {
namespace {

using json = nlohmann::json;
constexpr const char* kHeaderLength = "Inference-Header-Content-Length";

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

// Python's json module (so tritonclient) writes NaN, Infinity and -Infinity as bare
// tokens, which JSON lacks: they become the strings "NaN", "Infinity", "-Infinity"
// (read back as numbers by put_numbers).
std::string quote_non_finite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (const char* token : {"-Infinity", "Infinity", "NaN"}) {
      const size_t n = std::strlen(token);
      if (text.compare(i, n, token) == 0) {
        out += '"';
        out += token;
        out += '"';
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

Result<json> parse_json(const std::string& raw) {
  const bool has_tokens =
      raw.find("NaN") != std::string::npos || raw.find("Infinity") != std::string::npos;
  const std::string text = has_tokens ? quote_non_finite(raw) : raw;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return invalid_argument("the request body is not JSON; send a JSON object (docs/kserve.md)");
  }
  return j;
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

// ---- Tensors between JSON and bytes ----------------------------------------------------

void flatten(const json& j, std::vector<const json*>& out) {
  if (j.is_array()) {
    for (const json& e : j) flatten(e, out);
  } else {
    out.push_back(&j);
  }
}

template <typename T>
Status put_numbers(const std::vector<const json*>& items, const std::string& name,
                   std::string& out) {
  out.resize(items.size() * sizeof(T));
  auto* dst = reinterpret_cast<T*>(out.data());
  for (size_t i = 0; i < items.size(); ++i) {
    const json& v = *items[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (v.is_string()) {
        const std::string& word = v.get_ref<const std::string&>();
        if (word == "NaN" || word == "Infinity" || word == "-Infinity") {
          dst[i] = word == "NaN" ? std::numeric_limits<T>::quiet_NaN()
                                 : (word[0] == '-' ? -std::numeric_limits<T>::infinity()
                                                   : std::numeric_limits<T>::infinity());
          continue;
        }
      }
    }
    if (!v.is_number() && !v.is_boolean()) {
      return invalid_argument(fmt::format("{}: data[{}] is not a number", name, i));
    }
    if constexpr (std::is_same_v<T, bool>) {
      dst[i] = v.is_boolean() ? v.get<bool>() : v.get<double>() != 0;
    } else {
      dst[i] = v.is_boolean() ? static_cast<T>(v.get<bool>()) : v.get<T>();
    }
  }
  return Status();
}

Status json_to_bytes(const json& data, const std::string& datatype, const std::string& name,
                     std::string& out) {
  std::vector<const json*> items;
  flatten(data, items);
  if (datatype == "BOOL") return put_numbers<bool>(items, name, out);
  if (datatype == "INT8") return put_numbers<int8_t>(items, name, out);
  if (datatype == "INT16") return put_numbers<int16_t>(items, name, out);
  if (datatype == "INT32") return put_numbers<int32_t>(items, name, out);
  if (datatype == "INT64") return put_numbers<int64_t>(items, name, out);
  if (datatype == "UINT8") return put_numbers<uint8_t>(items, name, out);
  if (datatype == "UINT16") return put_numbers<uint16_t>(items, name, out);
  if (datatype == "UINT32") return put_numbers<uint32_t>(items, name, out);
  if (datatype == "UINT64") return put_numbers<uint64_t>(items, name, out);
  if (datatype == "FP32") return put_numbers<float>(items, name, out);
  if (datatype == "FP64") return put_numbers<double>(items, name, out);
  if (datatype == "FP16" || datatype == "BF16") {
    std::string floats;
    ET_RETURN_IF_ERROR(put_numbers<float>(items, name, floats));
    out.resize(items.size() * 2);
    for (size_t i = 0; i < items.size(); ++i) {
      float f;
      std::memcpy(&f, floats.data() + 4 * i, 4);
      const uint16_t bits = datatype == "FP16" ? half_detail::float_to_half_bits(f)
                                               : half_detail::float_to_bfloat16_bits(f);
      std::memcpy(out.data() + 2 * i, &bits, 2);
    }
    return Status();
  }
  return invalid_argument(
      fmt::format("{}: datatype {} cannot be sent as JSON data", name, printable(datatype)));
}

// Floats as JSON numbers, with NaN, Infinity and -Infinity as the bare tokens Triton
// and Python's json module use.
template <typename T>
std::string float_text(const std::string& raw) {
  std::string out = "[";
  const size_t n = raw.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    if (i) out += ',';
    if (std::isnan(v)) {
      out += "NaN";
    } else if (std::isinf(v)) {
      out += v < 0 ? "-Infinity" : "Infinity";
    } else {
      out += fmt::format("{}", v);
    }
  }
  return out + "]";
}

std::string half_text(const std::string& raw, bool bf16) {
  std::string floats(raw.size() * 2, '\0');
  for (size_t i = 0; i + 1 < raw.size(); i += 2) {
    uint16_t bits;
    std::memcpy(&bits, raw.data() + i, 2);
    const float f =
        bf16 ? half_detail::bfloat16_bits_to_float(bits) : half_detail::half_bits_to_float(bits);
    std::memcpy(floats.data() + 2 * i, &f, 4);
  }
  return float_text<float>(floats);
}

template <typename T>
json numbers(const std::string& raw) {
  json out = json::array();
  const size_t n = raw.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out.push_back(v);
  }
  return out;
}

// Integer and bool outputs as JSON (floats: float_text).
json bytes_to_json(const std::string& raw, const std::string& datatype) {
  if (datatype == "BOOL") return numbers<bool>(raw);
  if (datatype == "INT8") return numbers<int8_t>(raw);
  if (datatype == "INT16") return numbers<int16_t>(raw);
  if (datatype == "INT32") return numbers<int32_t>(raw);
  if (datatype == "INT64") return numbers<int64_t>(raw);
  if (datatype == "UINT8") return numbers<uint8_t>(raw);
  if (datatype == "UINT16") return numbers<uint16_t>(raw);
  if (datatype == "UINT32") return numbers<uint32_t>(raw);
  return numbers<uint64_t>(raw);
}

// Copies a JSON "parameters" object's shared-memory entries into a protocol map.
Status copy_parameters(const json& params, const std::string& name,
                       google::protobuf::Map<std::string, inference::InferParameter>& out) {
  if (!params.is_object()) return Status();
  for (const auto& [key, value] : params.items()) {
    if (key == "shared_memory_region") {
      if (!value.is_string())
        return invalid_argument(fmt::format("{}: {} must be a string", name, key));
      out[key].set_string_param(value.get<std::string>());
    } else if (key == "shared_memory_offset" || key == "shared_memory_byte_size") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        return invalid_argument(fmt::format("{}: {} must be an integer >= 0", name, key));
      }
      out[key].set_int64_param(value.get<int64_t>());
    } else if (key == "classification") {
      out[key].set_int64_param(1);
    }
  }
  return Status();
}

struct HttpInfer {
  inference::ModelInferRequest req;
  std::map<std::string, bool> binary_output;  // by output name, when the request says
  bool binary_default = false;
};

Result<HttpInfer> parse_infer(const httplib::Request& http, const std::string& model,
                              const std::string& version) {
  HttpInfer out;
  out.req.set_model_name(model);
  out.req.set_model_version(version);
  size_t header_length = http.body.size();
  if (http.has_header(kHeaderLength)) {
    const std::string v = http.get_header_value(kHeaderLength);
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n > http.body.size()) {
      return invalid_argument(fmt::format("{}: {} is not a length within the {}-byte body",
                                          kHeaderLength, printable(v), http.body.size()));
    }
    header_length = static_cast<size_t>(n);
  }
  ET_ASSIGN_OR_RETURN(json j, parse_json(http.body.substr(0, header_length)));
  if (!j.is_object() || !j.contains("inputs") || !j["inputs"].is_array()) {
    return invalid_argument("the request needs \"inputs\": a list of tensors");
  }
  if (j.contains("id") && j["id"].is_string()) out.req.set_id(j["id"].get<std::string>());
  if (j.contains("parameters") && j["parameters"].is_object()) {
    const json& p = j["parameters"];
    if (p.contains("binary_data_output") && p["binary_data_output"].is_boolean()) {
      out.binary_default = p["binary_data_output"].get<bool>();
    }
  }
  size_t binary_at = header_length;
  for (const json& in : j["inputs"]) {
    auto& t = *out.req.add_inputs();
    if (!in.is_object() || !in.contains("name") || !in["name"].is_string()) {
      return invalid_argument("each input needs a \"name\"");
    }
    t.set_name(in["name"].get<std::string>());
    if (in.contains("datatype") && in["datatype"].is_string()) {
      t.set_datatype(in["datatype"].get<std::string>());
    }
    if (in.contains("shape") && in["shape"].is_array()) {
      for (const json& d : in["shape"]) {
        if (!d.is_number_integer()) {
          return invalid_argument(fmt::format("{}: shape holds a non-integer", t.name()));
        }
        t.add_shape(d.get<int64_t>());
      }
    }
    const json params = in.value("parameters", json::object());
    ET_RETURN_IF_ERROR(copy_parameters(params, t.name(), *t.mutable_parameters()));
    if (t.parameters().count("shared_memory_region")) continue;
    if (params.contains("binary_data_size")) {
      const json& n = params["binary_data_size"];
      if (!n.is_number_integer() || n.get<int64_t>() < 0 ||
          static_cast<uint64_t>(n.get<int64_t>()) > http.body.size() - binary_at) {
        return invalid_argument(fmt::format(
            "{}: binary_data_size reaches past the {} bytes of binary data after the JSON header",
            t.name(), http.body.size() - header_length));
      }
      const size_t size = static_cast<size_t>(n.get<int64_t>());
      out.req.add_raw_input_contents(http.body.substr(binary_at, size));
      binary_at += size;
      continue;
    }
    if (!in.contains("data")) {
      return invalid_argument(fmt::format(
          "{}: give \"data\", or parameters binary_data_size or shared_memory_region", t.name()));
    }
    ET_RETURN_IF_ERROR(
        json_to_bytes(in["data"], t.datatype(), t.name(), *out.req.add_raw_input_contents()));
  }
  if (binary_at != http.body.size()) {
    return invalid_argument(
        fmt::format("{} bytes of binary data follow the inputs' binary_data_size",
                    http.body.size() - binary_at));
  }
  if (j.contains("outputs") && j["outputs"].is_array()) {
    for (const json& o : j["outputs"]) {
      if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) {
        return invalid_argument("each requested output needs a \"name\"");
      }
      auto& r = *out.req.add_outputs();
      r.set_name(o["name"].get<std::string>());
      const json params = o.value("parameters", json::object());
      ET_RETURN_IF_ERROR(copy_parameters(params, r.name(), *r.mutable_parameters()));
      if (params.contains("binary_data") && params["binary_data"].is_boolean()) {
        out.binary_output[r.name()] = params["binary_data"].get<bool>();
      }
    }
  }
  return out;
}

void write_infer(const HttpInfer& in, const inference::ModelInferResponse& resp,
                 httplib::Response& res) {
  json j = {{"model_name", resp.model_name()}, {"model_version", resp.model_version()}};
  if (!resp.id().empty()) j["id"] = resp.id();
  json outputs = json::array();
  std::string binary;
  std::vector<std::pair<std::string, std::string>> float_data;  // placeholder, array text
  for (int k = 0; k < resp.outputs_size(); ++k) {
    const auto& o = resp.outputs(k);
    const std::string& raw = resp.raw_output_contents(k);
    json t = {{"name", o.name()}, {"datatype", o.datatype()}, {"shape", json(o.shape())}};
    if (o.parameters().count("shared_memory_region")) {
      // Written to the client's region: no data here, and no "parameters" (Triton's
      // C++ HTTP client reads "binary_data_size" from any output that has them).
    } else {
      auto it = in.binary_output.find(o.name());
      const bool as_binary = it != in.binary_output.end() ? it->second : in.binary_default;
      if (as_binary) {
        t["parameters"] = {{"binary_data_size", raw.size()}};
        binary += raw;
      } else if (o.datatype() == "FP32" || o.datatype() == "FP64" || o.datatype() == "FP16" ||
                 o.datatype() == "BF16") {
        // Spliced in after dump(): nlohmann would write NaN as null.
        t["data"] = fmt::format("@et-float-data-{}@", k);
        const std::string& dt = o.datatype();
        float_data.emplace_back(t["data"].get<std::string>(), dt == "FP32" ? float_text<float>(raw)
                                                              : dt == "FP64"
                                                                  ? float_text<double>(raw)
                                                                  : half_text(raw, dt == "BF16"));
      } else {
        t["data"] = bytes_to_json(raw, o.datatype());
      }
    }
    outputs.push_back(std::move(t));
  }
  j["outputs"] = std::move(outputs);
  std::string header = j.dump();
  for (const auto& [placeholder, text] : float_data) {
    const std::string quoted = "\"" + placeholder + "\"";
    const size_t at = header.find(quoted);
    if (at != std::string::npos) header.replace(at, quoted.size(), text);
  }
  if (binary.empty()) {
    res.set_content(header, "application/json");
    return;
  }
  res.set_header(kHeaderLength, std::to_string(header.size()));
  header += binary;
  res.set_content(header, "application/octet-stream");
}

}  // namespace

Result<std::unique_ptr<HttpKServeService>> HttpKServeService::start(KServeState state,
                                                                    const std::string& address,
                                                                    size_t max_message_bytes) {
  auto h = std::unique_ptr<HttpKServeService>(new HttpKServeService(state));
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
  return h;
}

HttpKServeService::HttpKServeService(KServeState state) : s_(state) {}

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
    res.status = s_.core.shutting_down() ? 503 : 200;
  });
  h.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    send(res,
         {{"name", "et-serverd"},
          {"version", ServiceCore::version()},
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
               {"versions", {"1"}},
               {"platform", "executorch_pte"},
               {"inputs", tensor_list((*m)->inputs())},
               {"outputs", tensor_list((*m)->outputs())}});
  });
  h.Post(model + "/infer", [this](const httplib::Request& req, httplib::Response& res) {
    auto parsed = parse_infer(req, req.matches[1], group_or_empty(req, 2));
    if (!parsed.ok()) return fail(res, parsed.status());
    InferContext ic{s_.core,
                    s_.models,
                    s_.system_shm,
                    s_.cuda_shm,
                    [&req]() -> Result<Peer> {
                      return tcp_peer(req.remote_addr, req.remote_port, req.local_addr,
                                      req.local_port, false);
                    },
                    cancelled_};
    inference::ModelInferResponse resp;
    Status st = infer(ic, parsed->req, resp);
    if (!st.ok()) return fail(res, st);
    write_infer(*parsed, resp, res);
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
           Status st = s_.models.load(req.matches[1]);
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });
  h.Post(R"(/v2/repository/models/([^/]+)/unload)",
         [this](const httplib::Request& req, httplib::Response& res) {
           Status st = s_.models.unload(req.matches[1]);
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });

  auto peer = [](const httplib::Request& req, bool with_process) {
    return tcp_peer(req.remote_addr, req.remote_port, req.local_addr, req.local_port, with_process);
  };
  h.Get(R"(/v2/systemsharedmemory(?:/region/([^/]+))?/status)",
        [this, peer](const httplib::Request& req, httplib::Response& res) {
          auto regions = s_.system_shm.list(peer(req, false), group_or_empty(req, 1));
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
         [this, peer](const httplib::Request& req, httplib::Response& res) {
           auto j = parse_json(req.body);
           if (!j.ok()) return fail(res, j.status());
           if (!j->is_object() || !j->contains("key") || !(*j)["key"].is_string() ||
               !j->contains("byte_size") || !(*j)["byte_size"].is_number_unsigned()) {
             return fail(res, invalid_argument("register needs {\"key\": \"/name\", \"offset\": "
                                               "N, \"byte_size\": N}"));
           }
           const uint64_t offset = j->value("offset", uint64_t{0});
           Status st = s_.system_shm.add(peer(req, true), req.matches[1], (*j)["key"], offset,
                                         (*j)["byte_size"].get<uint64_t>());
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });
  h.Post(R"(/v2/systemsharedmemory(?:/region/([^/]+))?/unregister)",
         [this, peer](const httplib::Request& req, httplib::Response& res) {
           Status st = s_.system_shm.remove(peer(req, false), group_or_empty(req, 1));
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });
  h.Get(R"(/v2/cudasharedmemory(?:/region/([^/]+))?/status)", [this, peer](
                                                                  const httplib::Request& req,
                                                                  httplib::Response& res) {
    auto regions = s_.cuda_shm.list(peer(req, false), group_or_empty(req, 1));
    if (!regions.ok()) return fail(res, regions.status());
    json out = json::array();
    for (const auto& r : *regions) {
      out.push_back({{"name", r->name}, {"device_id", r->device_id}, {"byte_size", r->byte_size}});
    }
    send(res, out);
  });
  h.Post(R"(/v2/cudasharedmemory/region/([^/]+)/register)",
         [this, peer](const httplib::Request& req, httplib::Response& res) {
           auto j = parse_json(req.body);
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
           Status st = s_.cuda_shm.add(peer(req, true), req.matches[1], handle,
                                       j->value("device_id", int64_t{0}),
                                       j->value("byte_size", uint64_t{0}));
           if (!st.ok()) return fail(res, st);
           res.status = 200;
         });
  h.Post(R"(/v2/cudasharedmemory(?:/region/([^/]+))?/unregister)",
         [this, peer](const httplib::Request& req, httplib::Response& res) {
           Status st = s_.cuda_shm.remove(peer(req, false), group_or_empty(req, 1));
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
