// libFuzzer target: arbitrary bytes as et-serverd requests, handed to the service
// core in-process and to its descriptor socket. Byte 0 picks the call, byte 1 how ids
// are fixed up (a valid session token, one of several programs and methods, a
// delegated one among them, a segment id, or the fuzzer's own), the rest is parsed as
// that call's request message (or is the segment, program file or raw descriptor
// socket message). Every request must be answered with a
// status; none may crash the daemon. Build with scripts/fuzz.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "server/fd_channel.h"
#include "server/service_core.h"

namespace {

namespace pb = ::etserver::v1;
using et::server::ServiceCore;

struct World {
  std::unique_ptr<ServiceCore> core;
  std::unique_ptr<et::server::FdChannel> fd_channel;
  std::string fd_path;
  std::shared_ptr<et::server::Session> session;
  std::vector<uint64_t> programs, methods;
  uint64_t segment = 0;
};

// Programs of every kind the service treats differently: planned and unplanned
// inputs, dynamic shapes, an output that is an input, an XNNPACK delegate.
constexpr const char* kPrograms[] = {"mlp.pte", "add_unplanned_io.pte", "dynamic_batch.pte",
                                     "identity_output_unplanned_io.pte", "cnn_xnnpack.pte"};

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(ET_FIXTURES_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

World& world() {
  static World* w = [] {
    auto* out = new World;
    et::server::ServiceLimits limits;
    limits.max_segment_bytes_per_session = 1 << 20;
    limits.max_program_bytes = 1 << 22;
    limits.execution_deadline = std::chrono::milliseconds(200);
    limits.request_deadline = std::chrono::milliseconds(200);
    out->core = std::make_unique<ServiceCore>(limits);
    out->session = out->core->open_session("fuzzer").value();
    for (const char* name : kPrograms) {
      pb::LoadProgramRequest lp;
      lp.set_session(out->session->token);
      lp.set_program_bytes(read_fixture(name));
      pb::LoadProgramResponse lp_resp;
      if (!out->core->load_program(lp, lp_resp).ok()) continue;
      out->programs.push_back(lp_resp.program_id());
      pb::LoadMethodRequest lm;
      lm.set_session(out->session->token);
      lm.set_program_id(lp_resp.program_id());
      pb::LoadMethodResponse lm_resp;
      if (out->core->load_method(lm, lm_resp).ok()) out->methods.push_back(lm_resp.method_handle());
    }
    const int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (ftruncate(fd, 4096) == 0) fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
    auto seg = out->core->register_segment(out->session->token, fd);
    if (seg.ok()) out->segment = *seg;
    // The descriptor socket, served as the daemon serves it, in a private directory.
    char dir[] = "/tmp/et-request-fuzzer-XXXXXX";
    if (mkdtemp(dir) != nullptr) {
      out->fd_path = std::string(dir) + "/s.fd";
      auto channel = et::server::FdChannel::start(out->fd_path, *out->core);
      if (channel.ok()) out->fd_channel = std::move(channel).value();
    }
    return out;
  }();
  return *w;
}

template <typename Req>
bool parse(Req& req, const uint8_t* data, size_t size, uint8_t fix) {
  if (!req.ParseFromArray(data, static_cast<int>(size))) return false;
  World& w = world();
  if (fix & 1) req.set_session(w.session->token);
  // The high bits pick which of the loaded programs and methods a fixed id names.
  if constexpr (requires { req.set_method_handle(0); }) {
    if ((fix & 2) && !w.methods.empty())
      req.set_method_handle(w.methods[(fix >> 4) % w.methods.size()]);
  }
  if constexpr (requires { req.set_program_id(0); }) {
    if ((fix & 4) && !w.programs.empty()) {
      req.set_program_id(w.programs[(fix >> 4) % w.programs.size()]);
    }
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

void write_raw_seed(const std::string& dir, const std::string& name, uint8_t call, uint8_t fix,
                    const std::string& bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.put(static_cast<char>(call));
  out.put(static_cast<char>(fix));
  out << bytes;
}

void write_seed(const std::string& dir, const std::string& name, uint8_t call, uint8_t fix,
                const google::protobuf::Message& m) {
  write_raw_seed(dir, name, call, fix, m.SerializeAsString());
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
  // One run per program (the high bits of the fix byte pick it).
  for (uint8_t k = 0; k < std::size(kPrograms); ++k) {
    write_seed(dir, "seed-run-program-" + std::to_string(k), 0, static_cast<uint8_t>(3 | (k << 4)),
               run);
  }
  write_raw_seed(dir, "seed-segment", 8, 8 | 16, std::string("\x01\x00", 2));
  write_raw_seed(dir, "seed-program-fd", 9, 1, read_fixture("add.pte"));
  std::string request(40, '\0');
  std::memcpy(request.data(), "ETFD\x01\x00\x01\x00", 8);  // version 1, kind 1 (segment)
  write_raw_seed(dir, "seed-fd-socket", 10, 3, request);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  World& w = world();
  ServiceCore& core = *w.core;
  const uint8_t call = data[0] % 11, fix = data[1];
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
    case 8: {
      // A segment as the descriptor socket hands it over: the fuzzer picks its size,
      // whether it is sealed, and whether to drop it again.
      const size_t bytes = size == 0 ? 0 : (size_t{data[0]} << 8) | (size > 1 ? data[1] : 0);
      const int fd = memfd_create("fuzz-seg", MFD_CLOEXEC | MFD_ALLOW_SEALING);
      if (ftruncate(fd, static_cast<off_t>(bytes)) == 0 && (fix & 8)) {
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
      }
      auto id = core.register_segment(w.session->token, fd);
      if (id.ok() && (fix & 16)) {
        pb::DropSegmentRequest drop;
        drop.set_session(w.session->token);
        drop.set_segment_id(*id);
        status = core.drop_segment(drop);
      }
      break;
    }
    case 9: {
      // A program "by path": the fuzzer's bytes in a file descriptor.
      const int fd = memfd_create("fuzz-program", MFD_CLOEXEC);
      if (write(fd, data, size) != static_cast<ssize_t>(size)) {
        close(fd);
        return 0;
      }
      auto id = core.load_program_fd((fix & 1) ? w.session->token : std::string(32, '0'), fd);
      if (id.ok()) {
        pb::UnloadProgramRequest unload;
        unload.set_session(w.session->token);
        unload.set_program_id(*id);
        (void)core.unload_program(unload);
      }
      break;
    }
    case 10: {
      // Raw bytes on the descriptor socket, with or without a descriptor attached.
      if (!w.fd_channel) return 0;
      const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::memcpy(addr.sun_path, w.fd_path.c_str(), w.fd_path.size() + 1);
      if (connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
        std::string message(reinterpret_cast<const char*>(data), size);
        if ((fix & 1) && message.size() >= 40) {
          std::memcpy(message.data() + 8, w.session->token.data(), 32);
        }
        iovec iov{message.data(), message.size()};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        const int attached = (fix & 2) ? memfd_create("fuzz-fd", MFD_CLOEXEC) : -1;
        if (attached >= 0) {
          msg.msg_control = control;
          msg.msg_controllen = sizeof(control);
          cmsghdr* c = CMSG_FIRSTHDR(&msg);
          c->cmsg_level = SOL_SOCKET;
          c->cmsg_type = SCM_RIGHTS;
          c->cmsg_len = CMSG_LEN(sizeof(int));
          std::memcpy(CMSG_DATA(c), &attached, sizeof(int));
        }
        if (sendmsg(sock, &msg, MSG_NOSIGNAL) >= 0) {
          pollfd p{sock, POLLIN, 0};
          char reply[256];
          if (poll(&p, 1, 1000) > 0) (void)recv(sock, reply, sizeof(reply), 0);
        }
        if (attached >= 0) close(attached);
      }
      close(sock);
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
