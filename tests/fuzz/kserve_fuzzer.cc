// libFuzzer target: arbitrary bytes as KServe v2 inference requests into the daemon's
// KServe path (server/kserve/infer.h), in-process. Byte 0 picks the form:
//   0: the bytes as a serialized gRPC ModelInferRequest;
//   1: a request built from the bytes around a real model: datatypes, shapes, raw or
//      typed contents or a shared-memory region (offsets and sizes from the bytes),
//      requested outputs, most of them close to valid so that the checks past the
//      first ones are reached;
//   2: the bytes as an HTTP infer body (JSON, then binary data), with or without an
//      Inference-Header-Content-Length taken from the bytes, through the REST codec.
// Every request must end in a status; none may crash, leak or read out of bounds, and a
// response must encode. Build with scripts/fuzz.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/core/core.h"
#include "server/kserve/http_codec.h"
#include "server/kserve/infer.h"

namespace {

using namespace et::server;
using namespace et::server::kserve;

// Programs of every kind the KServe path treats differently: planned and unplanned
// inputs, a dynamic shape, an output that is an input, channels-last inputs, int and
// 16-bit float dtypes, scalar inputs, several methods, an XNNPACK delegate.
constexpr const char* kPrograms[] = {"add.pte",
                                     "mlp.pte",
                                     "add_unplanned_io.pte",
                                     "dynamic_batch.pte",
                                     "identity_output_unplanned_io.pte",
                                     "channels_last.pte",
                                     "bfloat16.pte",
                                     "cnn_xnnpack.pte",
                                     "zoo_index_put_mask.pte",
                                     "zoo_p_sym_ite_float.pte"};
constexpr const char* kDatatypes[] = {"FP32", "FP64",  "FP16", "BF16",  "INT64", "INT32", "INT16",
                                      "INT8", "UINT8", "BOOL", "BYTES", "",      "UINT64"};
constexpr size_t kRegionBytes = 4096;

struct World {
  std::unique_ptr<Core> core;
  std::unique_ptr<repository::ModelRepository> programs;
  std::unique_ptr<ModelCatalog> models;
  std::unique_ptr<ShmRegistry> system_shm;
  std::unique_ptr<CudaShmRegistry> cuda_shm;
  std::vector<std::shared_ptr<Model>> ready;
  Peer peer;
  std::atomic<bool> cancelled{false};
};

World& world() {
  static World* w = [] {
    auto* out = new World;
    ServiceLimits limits;
    limits.max_program_bytes = 1 << 22;
    limits.execution_deadline = std::chrono::milliseconds(200);
    limits.request_deadline = std::chrono::milliseconds(200);
    out->core = std::make_unique<Core>(limits);
    // The fixtures directory as the repository, in explicit mode: only these programs.
    repository::RepositoryOptions repo{.dir = ET_FIXTURES_DIR,
                                       .control = repository::ModelControl::kExplicit};
    for (const char* name : kPrograms) {
      const std::string file = name;
      repo.load_at_start.push_back(file.substr(0, file.rfind('.')));
    }
    out->programs = repository::ModelRepository::open(out->core->shared_programs(), repo).value();
    out->models = std::make_unique<ModelCatalog>(*out->core, out->programs.get(), 2);
    (void)out->programs->start();
    out->ready = out->models->ready();
    out->system_shm = std::make_unique<ShmRegistry>(ShmLimits{});
    out->cuda_shm = std::make_unique<CudaShmRegistry>();
    // One region the requests may name ("r"), an object of this process's user.
    const std::string key = "/et_kserve_fuzzer_" + std::to_string(getpid());
    const int fd = shm_open(key.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      (void)!ftruncate(fd, kRegionBytes);
      close(fd);
    }
    out->peer.local = true;
    out->peer.uid = getuid();
    out->peer.connection = "fuzzer";
    (void)out->system_shm->add(out->peer, "r", key, 0, kRegionBytes);
    shm_unlink(key.c_str());  // the registration holds it open
    return out;
  }();
  return *w;
}

// Reads the fuzzer's bytes in order; zeros once they run out.
struct Bytes {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
  uint8_t next() { return at < size ? data[at++] : 0; }
  std::string rest() {
    std::string s(reinterpret_cast<const char*>(data + at), size - at);
    at = size;
    return s;
  }
  std::string take(size_t n) {
    n = std::min(n, size - at);
    std::string s(reinterpret_cast<const char*>(data + at), n);
    at += n;
    return s;
  }
};

size_t element_bytes(const std::string& datatype) {
  if (datatype == "FP64" || datatype == "INT64" || datatype == "UINT64") return 8;
  if (datatype == "FP32" || datatype == "INT32") return 4;
  if (datatype == "FP16" || datatype == "BF16" || datatype == "INT16") return 2;
  return 1;
}

void set_region(google::protobuf::Map<std::string, inference::InferParameter>& p, Bytes& b,
                uint64_t size) {
  p["shared_memory_region"].set_string_param(b.next() % 8 ? "r" : "nope");
  if (b.next() % 2) p["shared_memory_offset"].set_int64_param(b.next() * 16);
  const uint8_t how = b.next() % 4;
  if (how == 1) p["shared_memory_byte_size"].set_int64_param(static_cast<int64_t>(size));
  if (how == 2) p["shared_memory_byte_size"].set_int64_param(b.next() * 8);
  if (how == 3) p["shared_memory_byte_size"].set_int64_param(-1);
}

inference::ModelInferRequest build(World& w, Bytes& b) {
  inference::ModelInferRequest req;
  const auto& model = w.ready[b.next() % w.ready.size()];
  req.set_model_name(b.next() % 16 ? model->name() : "missing");
  if (b.next() % 16 == 0) req.set_model_version(b.next() % 2 ? "1" : "2");
  for (const TensorSpec& spec : model->inputs()) {
    if (b.next() % 32 == 0) continue;  // a missing input
    auto& in = *req.add_inputs();
    in.set_name(b.next() % 32 ? spec.name : "input__9");
    const uint8_t dt = b.next();
    in.set_datatype(dt % 4 ? spec.datatype : kDatatypes[dt % std::size(kDatatypes)]);
    uint64_t numel = 1;
    const bool same_rank = b.next() % 8;
    const size_t rank = same_rank ? spec.max_shape.size() : b.next() % 4;
    for (size_t d = 0; d < rank; ++d) {
      int64_t size = d < spec.max_shape.size() ? spec.max_shape[d] : 1;
      const uint8_t shrink = b.next();
      if (shrink % 4 == 0) size = shrink % 3 == 0 ? -1 : std::min<int64_t>(size + 1, 64);
      if (shrink % 7 == 0 && size > 0) size = (shrink / 7) % (size + 1);
      in.add_shape(size);
      numel *= static_cast<uint64_t>(std::max<int64_t>(size, 0));
    }
    const uint64_t nbytes = numel * element_bytes(in.datatype());
    const uint8_t source = b.next() % 8;
    if (source == 0) {
      set_region(*in.mutable_parameters(), b, nbytes);
    } else if (source == 1) {
      auto& c = *in.mutable_contents();
      const size_t n = numel + (b.next() % 8 == 0 ? 1 : 0);
      for (size_t i = 0; i < n && i < 4096; ++i) {
        const uint8_t v = b.next();
        c.add_fp32_contents(v);
        c.add_int_contents(v);
        c.add_int64_contents(v);
        c.add_bool_contents(v & 1);
        c.add_uint_contents(v);
        c.add_fp64_contents(v);
      }
    } else {
      std::string raw = b.take(std::min<uint64_t>(nbytes, 1 << 16));
      if (source != 7) raw.resize(std::min<uint64_t>(nbytes, 1 << 16), '\x3f');
      *req.add_raw_input_contents() = raw;
    }
  }
  const uint8_t outs = b.next() % 4;
  for (const TensorSpec& spec : model->outputs()) {
    if (outs == 0) break;
    auto& o = *req.add_outputs();
    o.set_name(b.next() % 32 ? spec.name : "output__9");
    if (outs == 2) set_region(*o.mutable_parameters(), b, 0);
    if (outs == 3 && b.next() % 16 == 0) o.mutable_parameters()->operator[]("classification");
  }
  return req;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = world();
  if (w.ready.empty() || size == 0) return 0;
  Bytes b{data, size};
  InferContext ctx{*w.core,
                   *w.models,
                   *w.system_shm,
                   *w.cuda_shm,
                   [&w]() -> et::Result<Peer> { return w.peer; },
                   w.cancelled,
                   et::server::CallBounds{}};
  inference::ModelInferResponse resp;
  switch (b.next() % 3) {
    case 0: {
      inference::ModelInferRequest req;
      const std::string bytes = b.rest();
      if (req.ParseFromString(bytes)) (void)infer(ctx, req, resp);
      break;
    }
    case 1: {
      const inference::ModelInferRequest req = build(w, b);
      (void)infer(ctx, req, resp);
      break;
    }
    default: {
      const uint8_t header = b.next();
      const std::string model = w.ready[b.next() % w.ready.size()]->name();
      const std::string body = b.rest();
      std::optional<std::string> length;
      if (header % 4 == 1) length = std::to_string(header * 4);
      if (header % 4 == 2) length = std::to_string(body.size() / 2);
      if (header % 4 == 3) length = "x" + std::to_string(header);
      auto parsed = parse_http_infer(body, length, model, "");
      if (parsed.ok() && infer(ctx, parsed->req, resp).ok()) {
        (void)write_http_infer(*parsed, resp);
      }
      break;
    }
  }
  return 0;
}
