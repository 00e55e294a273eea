#include "server/kserve/http_codec.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "runtime/core/half.h"
#include "runtime/core/printable.h"

namespace et::server::kserve {
namespace {

using json = nlohmann::json;

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

}  // namespace

Result<json> parse_json_body(const std::string& raw) {
  const bool has_tokens =
      raw.find("NaN") != std::string::npos || raw.find("Infinity") != std::string::npos;
  const std::string text = has_tokens ? quote_non_finite(raw) : raw;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return invalid_argument("the request body is not JSON; send a JSON object (docs/kserve.md)");
  }
  return j;
}

namespace {

// ---- Tensors between JSON and bytes ----------------------------------------------------

// The elements of a (nested) data array in row-major order. Iterative, and at most
// kMaxNesting deep: a hostile body nests arrays a million deep (a recursion would
// overflow the thread's stack).
constexpr size_t kMaxNesting = 32;

Status flatten(const json& data, const std::string& name, std::vector<const json*>& out) {
  struct Level {
    const json* array;
    size_t next;
  };
  if (!data.is_array()) {
    out.push_back(&data);
    return Status();
  }
  std::vector<Level> stack{{&data, 0}};
  while (!stack.empty()) {
    Level& top = stack.back();
    if (top.next == top.array->size()) {
      stack.pop_back();
      continue;
    }
    const json& e = (*top.array)[top.next++];
    if (!e.is_array()) {
      out.push_back(&e);
      continue;
    }
    if (stack.size() >= kMaxNesting) {
      return invalid_argument(
          fmt::format("{}: data nests arrays more than {} deep", name, kMaxNesting));
    }
    stack.push_back({&e, 0});
  }
  return Status();
}

// One JSON value as a T; false when it is not a number (or bool) T can hold: an
// integer datatype takes integers in its range only, a float one any number (beyond
// its range: an infinity, as a cast to float would round).
template <typename T>
bool to_number(const json& v, T& out) {
  if (v.is_boolean()) {
    out = static_cast<T>(v.get<bool>());
    return true;
  }
  if (!v.is_number()) return false;
  if constexpr (std::is_same_v<T, bool>) {
    out = v.get<double>() != 0;
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max())) {
      out = d > 0 ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
    } else {
      out = static_cast<T>(d);
    }
    return true;
  } else {
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
      out = static_cast<T>(u);
      return true;
    }
    if (!v.is_number_integer()) return false;  // a float for an integer datatype
    const int64_t x = v.get<int64_t>();
    if (x < static_cast<int64_t>(std::numeric_limits<T>::min())) return false;
    if (x > 0 && static_cast<uint64_t>(x) > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      return false;
    }
    out = static_cast<T>(x);
    return true;
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
    T x{};
    if (!to_number(v, x)) {
      return invalid_argument(fmt::format(
          "{}: data[{}] is not a value of the input's datatype (a number in its range)", name, i));
    }
    dst[i] = x;
  }
  return Status();
}

Status json_to_bytes(const json& data, const std::string& datatype, const std::string& name,
                     std::string& out) {
  std::vector<const json*> items;
  ET_RETURN_IF_ERROR(flatten(data, name, items));
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

// A tensor's "parameters" object (by reference: copying a hostile, deeply nested value
// would recurse), or an empty one.
const json& parameters_of(const json& tensor) {
  static const json kNone = json::object();
  auto it = tensor.find("parameters");
  return it != tensor.end() && it->is_object() ? *it : kNone;
}

}  // namespace

Result<HttpInfer> parse_http_infer(const std::string& body,
                                   const std::optional<std::string>& header_length_value,
                                   const std::string& model, const std::string& version) {
  HttpInfer out;
  out.req.set_model_name(model);
  out.req.set_model_version(version);
  size_t header_length = body.size();
  if (header_length_value) {
    const std::string& v = *header_length_value;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n > body.size()) {
      return invalid_argument(fmt::format("{}: {} is not a length within the {}-byte body",
                                          kHeaderLength, printable(v), body.size()));
    }
    header_length = static_cast<size_t>(n);
  }
  ET_ASSIGN_OR_RETURN(json j, parse_json_body(body.substr(0, header_length)));
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
    const json& params = parameters_of(in);
    ET_RETURN_IF_ERROR(copy_parameters(params, t.name(), *t.mutable_parameters()));
    if (t.parameters().count("shared_memory_region")) continue;
    if (params.contains("binary_data_size")) {
      const json& n = params["binary_data_size"];
      if (!n.is_number_integer() || n.get<int64_t>() < 0 ||
          static_cast<uint64_t>(n.get<int64_t>()) > body.size() - binary_at) {
        return invalid_argument(fmt::format(
            "{}: binary_data_size reaches past the {} bytes of binary data after the JSON header",
            t.name(), body.size() - header_length));
      }
      const size_t size = static_cast<size_t>(n.get<int64_t>());
      out.req.add_raw_input_contents(body.substr(binary_at, size));
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
  if (binary_at != body.size()) {
    return invalid_argument(fmt::format(
        "{} bytes of binary data follow the inputs' binary_data_size", body.size() - binary_at));
  }
  if (j.contains("outputs") && j["outputs"].is_array()) {
    for (const json& o : j["outputs"]) {
      if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) {
        return invalid_argument("each requested output needs a \"name\"");
      }
      auto& r = *out.req.add_outputs();
      r.set_name(o["name"].get<std::string>());
      const json& params = parameters_of(o);
      ET_RETURN_IF_ERROR(copy_parameters(params, r.name(), *r.mutable_parameters()));
      if (params.contains("binary_data") && params["binary_data"].is_boolean()) {
        out.binary_output[r.name()] = params["binary_data"].get<bool>();
      }
    }
  }
  return out;
}

HttpBody write_http_infer(const HttpInfer& in, const inference::ModelInferResponse& resp) {
  // Written piece by piece, not by one dump(): float data is written by hand (nlohmann
  // would write NaN as null), each piece in its place, with nothing to search for.
  json head = {{"model_name", resp.model_name()}, {"model_version", resp.model_version()}};
  if (!resp.id().empty()) head["id"] = resp.id();
  std::string text = head.dump();
  text.pop_back();  // the closing brace
  text += R"(,"outputs":[)";
  std::string binary;
  for (int k = 0; k < resp.outputs_size(); ++k) {
    const auto& o = resp.outputs(k);
    const std::string& raw = resp.raw_output_contents(k);
    json t = {{"name", o.name()}, {"datatype", o.datatype()}, {"shape", json(o.shape())}};
    std::string float_data;
    if (o.parameters().count("shared_memory_region")) {
      // Written to the client's region: no data here, and no "parameters" (Triton's
      // C++ HTTP client reads "binary_data_size" from any output that has them).
    } else {
      auto it = in.binary_output.find(o.name());
      const bool as_binary = it != in.binary_output.end() ? it->second : in.binary_default;
      const std::string& dt = o.datatype();
      if (as_binary) {
        t["parameters"] = {{"binary_data_size", raw.size()}};
        binary += raw;
      } else if (dt == "FP32") {
        float_data = float_text<float>(raw);
      } else if (dt == "FP64") {
        float_data = float_text<double>(raw);
      } else if (dt == "FP16" || dt == "BF16") {
        float_data = half_text(raw, dt == "BF16");
      } else {
        t["data"] = bytes_to_json(raw, dt);
      }
    }
    std::string piece = t.dump();
    if (!float_data.empty()) {
      piece.pop_back();
      piece += R"(,"data":)" + float_data + "}";
    }
    text += (k ? "," : "") + piece;
  }
  text += "]}";
  HttpBody out;
  if (binary.empty()) {
    out.text = std::move(text);
    out.content_type = "application/json";
    return out;
  }
  out.header_length = text.size();
  out.text = std::move(text) + binary;
  out.content_type = "application/octet-stream";
  return out;
}

}  // namespace et::server::kserve
