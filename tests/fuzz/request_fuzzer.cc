// libFuzzer target: arbitrary bytes as et-serverd requests, handed to the service
// core in-process. Byte 0 picks the call, byte 1 how ids are fixed up (a valid session
// token, program id, method handle, segment id, or the fuzzer's own), the rest is
// parsed as that call's request message. Every request must be answered with a
// status; none may crash the daemon. Build with scripts/fuzz.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "server/service_core.h"

namespace {

namespace pb = ::etserver::v1;
using et::server::ServiceCore;

struct World {
  std::unique_ptr<ServiceCore> core;
  std::shared_ptr<et::server::Session> session;
  uint64_t program = 0, method = 0, segment = 0;
};

World& world() {
  static World* w = [] {
    auto* out = new World;
    et::server::ServiceLimits limits;
    limits.max_segment_bytes_per_session = 1 << 20;
    limits.max_program_bytes = 1 << 20;
    out->core = std::make_unique<ServiceCore>(limits);
    out->session = out->core->open_session("fuzzer").value();
    std::ifstream in(std::string(ET_FIXTURES_DIR) + "/mlp.pte", std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    pb::LoadProgramRequest lp;
    lp.set_session(out->session->token);
    lp.set_program_bytes(bytes);
    pb::LoadProgramResponse lp_resp;
    if (out->core->load_program(lp, lp_resp).ok()) out->program = lp_resp.program_id();
    pb::LoadMethodRequest lm;
    lm.set_session(out->session->token);
    lm.set_program_id(out->program);
    pb::LoadMethodResponse lm_resp;
    if (out->core->load_method(lm, lm_resp).ok()) out->method = lm_resp.method_handle();
    const int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (ftruncate(fd, 4096) == 0) fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
    auto seg = out->core->register_segment(out->session->token, fd);
    if (seg.ok()) out->segment = *seg;
    return out;
  }();
  return *w;
}

template <typename Req>
bool parse(Req& req, const uint8_t* data, size_t size, uint8_t fix) {
  if (!req.ParseFromArray(data, static_cast<int>(size))) return false;
  World& w = world();
  if (fix & 1) req.set_session(w.session->token);
  if constexpr (requires { req.set_method_handle(0); }) {
    if (fix & 2) req.set_method_handle(w.method);
  }
  if constexpr (requires { req.set_program_id(0); }) {
    if (fix & 4) req.set_program_id(w.program);
  }
  return true;
}

// Points every segment reference of the inputs at the real segment.
void fix_segments(google::protobuf::RepeatedPtrField<pb::Value>& values, uint64_t id) {
  for (pb::Value& v : values) {
    if (v.has_tensor() && v.tensor().has_segment()) {
      v.mutable_tensor()->mutable_segment()->set_segment_id(id);
    }
  }
}

void write_seed(const std::string& dir, const std::string& name, uint8_t call, uint8_t fix,
                const google::protobuf::Message& m) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.put(static_cast<char>(call));
  out.put(static_cast<char>(fix));
  out << m.SerializeAsString();
}

}  // namespace

// Seeds the corpus directory (the last non-flag argument) with valid requests, so the
// fuzzer mutates real messages as well as random bytes.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::string dir;
  for (int i = 1; i < *argc; ++i) {
    if ((*argv)[i][0] != '-') dir = (*argv)[i];
  }
  if (dir.empty()) return 0;
  pb::Tensor input;
  input.set_dtype(pb::FLOAT32);
  input.add_sizes(4);
  input.add_sizes(16);
  input.set_inline_data(std::string(4 * 16 * 4, '\x01'));
  pb::RunRequest run;
  *run.add_inputs()->mutable_tensor() = input;
  write_seed(dir, "seed-run-inline", 0, 3, run);
  pb::RunRequest via_segment = run;
  via_segment.mutable_inputs(0)->mutable_tensor()->clear_inline_data();
  via_segment.mutable_inputs(0)->mutable_tensor()->mutable_segment()->set_length(256);
  via_segment.add_placements()->mutable_segment()->set_offset(256);
  write_seed(dir, "seed-run-segment", 0, 11, via_segment);
  pb::SetInputsRequest set;
  *set.add_inputs()->mutable_tensor() = input;
  write_seed(dir, "seed-set-inputs", 1, 3, set);
  write_seed(dir, "seed-execute", 2, 3, pb::ExecuteRequest());
  write_seed(dir, "seed-get-outputs", 3, 3, pb::GetOutputsRequest());
  pb::LoadProgramRequest by_hash;
  by_hash.set_sha256(std::string(64, 'a'));
  write_seed(dir, "seed-load-program", 4, 1, by_hash);
  write_seed(dir, "seed-describe", 5, 5, pb::DescribeProgramRequest());
  pb::LoadMethodRequest lm;
  lm.set_method_name("forward");
  write_seed(dir, "seed-load-method", 7, 5, lm);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  World& w = world();
  ServiceCore& core = *w.core;
  const uint8_t call = data[0] % 8, fix = data[1];
  data += 2;
  size -= 2;
  et::Status status;
  switch (call) {
    case 0: {
      pb::RunRequest req;
      if (!parse(req, data, size, fix)) return 0;
      if (fix & 8) fix_segments(*req.mutable_inputs(), w.segment);
      pb::RunResponse resp;
      status = core.run(req, resp);
      break;
    }
    case 1: {
      pb::SetInputsRequest req;
      if (!parse(req, data, size, fix)) return 0;
      if (fix & 8) fix_segments(*req.mutable_inputs(), w.segment);
      status = core.set_inputs(req);
      break;
    }
    case 2: {
      pb::ExecuteRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::ExecuteResponse resp;
      status = core.execute(req, resp);
      break;
    }
    case 3: {
      pb::GetOutputsRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::GetOutputsResponse resp;
      status = core.get_outputs(req, resp);
      break;
    }
    case 4: {
      pb::LoadProgramRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::LoadProgramResponse resp;
      status = core.load_program(req, resp);
      break;
    }
    case 5: {
      pb::DescribeProgramRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::DescribeProgramResponse resp;
      status = core.describe_program(req, resp);
      break;
    }
    case 6: {
      pb::ListProgramsRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::ListProgramsResponse resp;
      status = core.list_programs(req, resp);
      break;
    }
    default: {
      pb::LoadMethodRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::LoadMethodResponse resp;
      status = core.load_method(req, resp);
      // Keep the session small: drop what the fuzzer loaded.
      if (status.ok()) {
        pb::DropMethodRequest drop;
        drop.set_session(w.session->token);
        drop.set_method_handle(resp.method_handle());
        (void)core.drop_method(drop);
      }
      break;
    }
  }
  (void)status;  // answered: OK or an error status, never a crash
  return 0;
}
