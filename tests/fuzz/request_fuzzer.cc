// libFuzzer target: arbitrary bytes as et-serverd requests, handed to the service
// core in-process and to its descriptor socket. Byte 0 picks the call, byte 1 how ids
// are fixed up (a valid session token, one of several programs and methods, a
// delegated one among them, a segment id, or the fuzzer's own), the rest is parsed as
// that call's request message (or is the segment, program file or raw descriptor
// socket message). Call 11 is the fast path: the bytes are written into a fast-path
// channel's request area (header and message, framed correctly or not), the doorbell
// rung, and more bytes written over the request area while the daemon serves it.
// Every request must be answered with a status; none may crash the daemon, and the
// fast path must answer every ring. Build with scripts/fuzz.
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
#include <thread>
#include <vector>

#include "proto/fast_path.h"
#include "server/core/core.h"
#include "server/transport/etproto/et_protocol.h"
#include "server/transport/ring/channels.h"
#include "server/transport/ring/fd_socket.h"
#include "tests/support/eventually.h"

namespace {

namespace pb = ::etserver::v1;
using et::server::Core;

struct World {
  std::unique_ptr<Core> core;
  std::unique_ptr<et::server::EtProtocol> et;
  std::unique_ptr<et::server::FdSocket> fd_channel;
  std::string fd_path;
  std::shared_ptr<et::server::Session> session;
  std::vector<uint64_t> programs, methods;
  uint64_t segment = 0;
  // A fast-path channel of the session: its memory as the client sees it.
  uint8_t* channel = nullptr;
  size_t channel_bytes = 0;
  uint32_t seq = 0;
  std::weak_ptr<et::server::FastChannel> fast;
  int link = -1;  // the client's end of the channel's link
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
    out->core = std::make_unique<Core>(limits);
    out->et = std::make_unique<et::server::EtProtocol>(*out->core);
    out->session = out->core->open_session("fuzzer").value();
    for (const char* name : kPrograms) {
      pb::LoadProgramRequest lp;
      lp.set_session(out->session->token);
      lp.set_program_bytes(read_fixture(name));
      pb::LoadProgramResponse lp_resp;
      if (!out->et->load_program(lp, lp_resp).ok()) continue;
      out->programs.push_back(lp_resp.program_id());
      pb::LoadMethodRequest lm;
      lm.set_session(out->session->token);
      lm.set_program_id(lp_resp.program_id());
      pb::LoadMethodResponse lm_resp;
      if (out->et->load_method(lm, lm_resp).ok()) out->methods.push_back(lm_resp.method_handle());
    }
    const int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (ftruncate(fd, 4096) == 0) fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
    auto seg = out->core->register_segment(out->session->token, fd);
    if (seg.ok()) out->segment = *seg;
    // A fast-path channel, opened as the descriptor socket opens one.
    out->channel_bytes = et::wire::kChannelMinBytes;
    const int ring = memfd_create("fuzz-fast-path", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int pair[2];
    if (ftruncate(ring, static_cast<off_t>(out->channel_bytes)) == 0 &&
        fcntl(ring, F_ADD_SEALS, F_SEAL_SHRINK) == 0 &&
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0) {
      void* base = mmap(nullptr, out->channel_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ring, 0);
      if (base != MAP_FAILED &&
          et::server::open_fast_channel(*out->core, {}, *out->et, out->session->token, dup(ring),
                                        pair[1], out->fast)
              .ok()) {
        out->channel = static_cast<uint8_t*>(base);
        out->link = pair[0];
      }
    }
    close(ring);
    // The descriptor socket, served as the daemon serves it, in a private directory.
    char dir[] = "/tmp/et-request-fuzzer-XXXXXX";
    if (mkdtemp(dir) != nullptr) {
      out->fd_path = std::string(dir) + "/s.fd";
      auto channel = et::server::FdSocket::start(out->fd_path, *out->et);
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

// Writes `data` into the fast-path channel as a request and rings: with fix bit 0 the
// header is framed correctly (kind from the high bits, length of what follows), else
// the first 16 bytes are the header as given; with bit 1 the message is a RunRequest
// whose ids are fixed up as in parse(). Bit 2 scribbles over the request area while the
// daemon may be reading it; bit 3 over the daemon's own words before the ring. The
// daemon must answer (a hang traps) with a code and a length inside the area.
void fast_path_call(World& w, uint8_t fix, const uint8_t* data, size_t size) {
  using et::wire::MessageHeader;
  const et::wire::ChannelLayout layout = et::wire::channel_layout(w.channel_bytes);
  uint8_t* area = w.channel + layout.request_offset;
  auto* header = reinterpret_cast<et::wire::ChannelHeader*>(w.channel);
  std::string body;
  MessageHeader head{};
  if (fix & 1) {
    body.assign(reinterpret_cast<const char*>(data), size);
    if (fix & 2) {
      pb::RunRequest req;
      if (parse(req, data, size, static_cast<uint8_t>(fix | 3))) {
        fix_segments(*req.mutable_inputs(), w.segment);
        body = req.SerializeAsString();
      }
    }
    head.kind_or_code = static_cast<uint32_t>((fix >> 4) % 4 + 1);
    head.length = static_cast<uint32_t>(std::min(body.size(), layout.message_capacity()));
  } else {
    std::memcpy(&head, data, std::min(size, sizeof(head)));
    if (size > sizeof(head)) body.assign(reinterpret_cast<const char*>(data) + 16, size - 16);
  }
  if (fix & 8) std::memset(w.channel + 64, fix, 8);  // response_seq and daemon_waiting
  std::memcpy(area + sizeof(head), body.data(), std::min(body.size(), layout.message_capacity()));
  const uint32_t seq = ++w.seq;
  head.seq = seq;
  std::memcpy(area, &head, sizeof(head));
  header->request_seq.store(seq, std::memory_order_seq_cst);
  et::wire::futex_wake(&header->request_seq);
  if (fix & 4) {
    for (size_t i = 0; i < layout.area_bytes && i < 4 * size; ++i) {
      area[i] = data[i % size] ^ static_cast<uint8_t>(i);
    }
  }
  // Its deadlines (200 ms each) bound a healthy answer; only a hang outlasts the backstop
  // (a busy machine under ASan may take seconds).
  const auto give_up = std::chrono::steady_clock::now() + et::testing::kBackstop;
  while (header->response_seq.load(std::memory_order_acquire) != seq) {
    if (std::chrono::steady_clock::now() > give_up) __builtin_trap();  // the daemon hung
    std::this_thread::yield();
  }
  MessageHeader answer{};
  std::memcpy(&answer, w.channel + layout.response_offset, sizeof(answer));
  if (answer.seq != seq || answer.kind_or_code > 16 || answer.length > layout.message_capacity()) {
    __builtin_trap();  // the daemon wrote a malformed answer
  }
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
  // The fast path: a framed Run, SetInputs, Execute and GetOutputs, and a raw header.
  for (uint8_t k = 0; k < 4; ++k) {
    write_seed(dir, "seed-fast-path-" + std::to_string(k), 11, static_cast<uint8_t>(3 | (k << 4)),
               k == 1 ? static_cast<const google::protobuf::Message&>(set) : run);
  }
  write_seed(dir, "seed-fast-path-scribbled", 11, 3 | 4 | 8, run);
  std::string raw(16, '\0');
  raw[0] = 1;
  raw[4] = static_cast<char>(run.ByteSizeLong());
  write_raw_seed(dir, "seed-fast-path-raw", 11, 0, raw + run.SerializeAsString());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  World& w = world();
  Core& core = *w.core;
  et::server::EtProtocol& et = *w.et;
  const uint8_t call = data[0] % 12, fix = data[1];
  data += 2;
  size -= 2;
  et::Status status;
  switch (call) {
    case 0: {
      pb::RunRequest req;
      if (!parse(req, data, size, fix)) return 0;
      if (fix & 8) fix_segments(*req.mutable_inputs(), w.segment);
      pb::RunResponse resp;
      status = et.run(req, resp);
      break;
    }
    case 1: {
      pb::SetInputsRequest req;
      if (!parse(req, data, size, fix)) return 0;
      if (fix & 8) fix_segments(*req.mutable_inputs(), w.segment);
      status = et.set_inputs(req);
      break;
    }
    case 2: {
      pb::ExecuteRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::ExecuteResponse resp;
      status = et.execute(req, resp);
      break;
    }
    case 3: {
      pb::GetOutputsRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::GetOutputsResponse resp;
      status = et.get_outputs(req, resp);
      break;
    }
    case 4: {
      pb::LoadProgramRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::LoadProgramResponse resp;
      status = et.load_program(req, resp);
      break;
    }
    case 5: {
      pb::DescribeProgramRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::DescribeProgramResponse resp;
      status = et.describe_program(req, resp);
      break;
    }
    case 6: {
      pb::ListProgramsRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::ListProgramsResponse resp;
      status = et.list_programs(req, resp);
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
        status = et.drop_segment(drop);
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
        (void)et.unload_program(unload);
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
    case 11: {
      if (w.channel == nullptr) __builtin_trap();  // the channel must open
      fast_path_call(w, fix, data, size);
      break;
    }
    default: {
      pb::LoadMethodRequest req;
      if (!parse(req, data, size, fix)) return 0;
      pb::LoadMethodResponse resp;
      status = et.load_method(req, resp);
      // Keep the session small: drop what the fuzzer loaded.
      if (status.ok()) {
        pb::DropMethodRequest drop;
        drop.set_session(w.session->token);
        drop.set_method_handle(resp.method_handle());
        (void)et.drop_method(drop);
      }
      break;
    }
  }
  (void)status;  // answered: OK or an error status, never a crash
  return 0;
}
