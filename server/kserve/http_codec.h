// KServe v2 REST bodies: an inference request's JSON (with Triton's binary tensor data
// extension) into the protocol's ModelInferRequest, and a ModelInferResponse back into
// JSON and binary, as http_service.cc sends them. No I/O: the fuzzer and the tests
// call these directly.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kserve_v2.pb.h"
#include "runtime/core/status.h"

namespace et::server::kserve {

inline constexpr const char* kHeaderLength = "Inference-Header-Content-Length";

// `raw` as JSON; NaN, Infinity and -Infinity (as Python's json module writes them)
// become the strings "NaN", "Infinity" and "-Infinity". InvalidArgument when not JSON.
Result<nlohmann::json> parse_json_body(const std::string& raw);

struct HttpInfer {
  inference::ModelInferRequest req;
  std::map<std::string, bool> binary_output;  // by output name, where the request says
  bool binary_default = false;                // "binary_data_output"
};

// An infer request's body (`header_length`: the Inference-Header-Content-Length
// header, if sent) for `model` and `version`. Every input ends up in shared memory or
// in raw_input_contents (JSON data converted to the input's datatype). InvalidArgument
// naming the input: not JSON, a header length past the body, a binary size past the
// binary data or binary data left over, JSON data that is not numbers.
Result<HttpInfer> parse_http_infer(const std::string& body,
                                   const std::optional<std::string>& header_length,
                                   const std::string& model, const std::string& version);

struct HttpBody {
  std::string text;
  std::string content_type;
  std::optional<size_t> header_length;  // set when binary data follows the JSON
};

// The response body for `resp`: each output as JSON data (floats with NaN and Infinity
// written as Python reads them), as binary data, or (in shared memory) neither.
HttpBody write_http_infer(const HttpInfer& request, const inference::ModelInferResponse& resp);

}  // namespace et::server::kserve
