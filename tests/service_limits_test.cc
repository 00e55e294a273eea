// The daemon's per-client limits and the findings of shared/docs/security-review.md
// that a call sequence (not a program) triggers: segment accounting and descriptors
// (M3), per-session and per-peer caps (M5), execution deadlines and cancellation (M6),
// huge-page memfds (M8), hashes as capabilities across hosts (L4), the descriptor
// socket under a client that never reads (M4), overlapping placements (L3). In-process against
// the service core, as the transports call it.
#include <dirent.h>
#include <fcntl.h>
#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "proto/fd_client.h"
#include "proto/fd_protocol.h"
#include "runtime/testing/program_builder.h"
#include "server/core/core.h"
#include "server/transport/etproto/et_protocol.h"
#include "server/transport/ring/fd_socket.h"
#include "tests/support/eventually.h"

namespace et::server {
namespace {

namespace pb = ::etserver::v1;
using testing::eventually;
using testing::kBackstop;
using testing::ProgramBuilder;

std::string fixture_bytes(const std::string& name) {
  std::ifstream in(std::string(ET_FIXTURES_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string as_string(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

// x: an unplanned f32 [4] input returned as the output (zero copy: it stays pointed at
// whatever memory the caller bound, a segment included).
std::string identity_program() {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {4}});
  b.set_inputs({x});
  b.set_outputs({x});
  return as_string(b.finish());
}

// A loop that never ends by itself: only the step budget, a deadline or a cancellation
// stops it.
std::string endless_program() { return as_string(testing::endless_program().finish()); }

size_t open_descriptors() {
  size_t n = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (readdir(dir) != nullptr) ++n;
  closedir(dir);
  return n;
}

int sealed_memfd(size_t size, unsigned flags = 0) {
  const int fd = memfd_create("limits", MFD_CLOEXEC | MFD_ALLOW_SEALING | flags);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class ServiceLimitsTest : public ::testing::Test {
 protected:
  void start(ServiceLimits limits) {
    core_ = std::make_unique<Core>(limits);
    et_ = std::make_unique<EtProtocol>(*core_);
    session_ = core_->open_session("test").value();
  }

  Result<uint64_t> load_program(const std::shared_ptr<Session>& s, const std::string& bytes,
                                const std::string& sha256 = "") {
    pb::LoadProgramRequest req;
    req.set_session(s->token);
    if (!bytes.empty()) req.set_program_bytes(bytes);
    req.set_sha256(sha256);
    pb::LoadProgramResponse resp;
    ET_RETURN_IF_ERROR(et_->load_program(req, resp));
    sha256_ = resp.sha256();
    return resp.program_id();
  }

  Result<uint64_t> load_method(const std::shared_ptr<Session>& s, uint64_t program) {
    pb::LoadMethodRequest req;
    req.set_session(s->token);
    req.set_program_id(program);
    pb::LoadMethodResponse resp;
    ET_RETURN_IF_ERROR(et_->load_method(req, resp));
    return resp.method_handle();
  }

  Status run(const std::shared_ptr<Session>& s, uint64_t method, std::vector<pb::Value> inputs,
             const CallBounds& bounds = {}) {
    pb::RunRequest req;
    req.set_session(s->token);
    req.set_method_handle(method);
    for (pb::Value& v : inputs) *req.add_inputs() = std::move(v);
    pb::RunResponse resp;
    return et_->run(req, resp, bounds);
  }

  static pb::Value in_segment(uint64_t segment) {
    pb::Value v;
    pb::Tensor& t = *v.mutable_tensor();
    t.set_dtype(pb::FLOAT32);
    t.add_sizes(4);
    t.mutable_segment()->set_segment_id(segment);
    t.mutable_segment()->set_length(16);
    return v;
  }

  static pb::Value inline_input() {
    pb::Value v;
    pb::Tensor& t = *v.mutable_tensor();
    t.set_dtype(pb::FLOAT32);
    t.add_sizes(4);
    t.set_inline_data(std::string(16, '\0'));
    return v;
  }

  Status drop_segment(uint64_t id) {
    pb::DropSegmentRequest req;
    req.set_session(session_->token);
    req.set_segment_id(id);
    return et_->drop_segment(req);
  }

  std::unique_ptr<Core> core_;
  std::unique_ptr<EtProtocol> et_;  // the et protocol over core_
  std::shared_ptr<Session> session_;
  std::string sha256_;
};

// M3: the descriptor is closed once mapped; a dropped segment still bound to an input
// counts until the input is rebound; the number of segments is capped.
TEST_F(ServiceLimitsTest, M3_SegmentsHoldNoDescriptorAndDroppedOnesCountWhileMapped) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  ServiceLimits limits;
  limits.max_segment_bytes_per_session = 2 * page;
  limits.max_segments_per_session = 2;
  start(limits);
  const uint64_t method =
      load_method(session_, *load_program(session_, identity_program())).value();

  const size_t before = open_descriptors();
  auto first = core_->register_segment(session_->token, sealed_memfd(page));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(open_descriptors(), before);  // the memfd was closed after mmap

  ASSERT_TRUE(run(session_, method, {in_segment(*first)}).ok());
  ASSERT_TRUE(drop_segment(*first).ok());
  // Still mapped by the bound input: one page left, not two.
  auto two_pages = core_->register_segment(session_->token, sealed_memfd(2 * page));
  ASSERT_FALSE(two_pages.ok());
  EXPECT_EQ(two_pages.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(two_pages.status().message().find("segment limit (4096 bytes left)"), std::string::npos)
      << two_pages.status().to_string();

  ASSERT_TRUE(run(session_, method, {inline_input()}).ok());  // rebinding unmaps it
  auto again = core_->register_segment(session_->token, sealed_memfd(1));
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  auto second = core_->register_segment(session_->token, sealed_memfd(1));
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  auto third = core_->register_segment(session_->token, sealed_memfd(1));
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.status().message().find("--max-segments"), std::string::npos)
      << third.status().to_string();
  EXPECT_EQ(open_descriptors(), before);  // refused ones are closed too
}

// M8: a hugetlbfs memfd (holes punched in it SIGBUS the daemon) is refused.
// An input's sizes are bounded before any byte is looked at: each fits the runtime's
// 32-bit sizes, and together they hold at most 2^40 elements (the same check as KServe's).
TEST_F(ServiceLimitsTest, InputShapesAreBoundedBeforeTheirBytes) {
  start({});
  const uint64_t method =
      load_method(session_, *load_program(session_, identity_program())).value();
  pb::Value huge = inline_input();
  huge.mutable_tensor()->clear_sizes();
  for (int64_t s : {int64_t{1} << 20, int64_t{1} << 20, int64_t{2}}) {
    huge.mutable_tensor()->add_sizes(s);
  }
  Status s = run(session_, method, {huge});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("inputs[0]: sizes [1048576, 1048576, 2] hold more than 2^40 "
                             "elements"),
            std::string::npos)
      << s.to_string();
  pb::Value wide = inline_input();
  wide.mutable_tensor()->set_sizes(0, int64_t{1} << 31);
  s = run(session_, method, {wide});
  EXPECT_NE(s.message().find("size 2147483648 does not fit"), std::string::npos) << s.to_string();
}

TEST_F(ServiceLimitsTest, M8_HugePageMemfdsAreRefused) {
  start({});
  const int fd = sealed_memfd(size_t{2} << 20, MFD_HUGETLB);
  if (fd < 0) GTEST_SKIP() << "this kernel makes no hugetlbfs memfds: nothing to refuse";
  auto id = core_->register_segment(session_->token, fd);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("MFD_HUGETLB"), std::string::npos)
      << id.status().to_string();
}

// M5: what one session may hold or run at once, and sessions per TCP host.
TEST_F(ServiceLimitsTest, M5_ProgramsMethodsAndSessionsPerPeerAreCapped) {
  ServiceLimits limits;
  limits.max_programs_per_session = 1;
  limits.max_methods_per_session = 1;
  limits.max_sessions_per_peer = 1;
  start(limits);
  const uint64_t program = load_program(session_, identity_program()).value();
  auto second_program = load_program(session_, endless_program());
  ASSERT_FALSE(second_program.ok());
  EXPECT_NE(second_program.status().message().find("--max-programs"), std::string::npos)
      << second_program.status().to_string();
  ASSERT_TRUE(load_method(session_, program).ok());
  auto second_method = load_method(session_, program);
  ASSERT_FALSE(second_method.ok());
  EXPECT_NE(second_method.status().message().find("--max-methods"), std::string::npos)
      << second_method.status().to_string();

  // Bytes of programs per session, refused before the bytes are copied.
  limits.max_programs_per_session = 8;
  limits.max_program_bytes_per_session = 300;
  start(limits);
  ASSERT_TRUE(load_program(session_, identity_program()).ok());  // 264 bytes
  auto over_bytes = load_program(session_, endless_program());   // 240 more
  ASSERT_FALSE(over_bytes.ok());
  EXPECT_NE(over_bytes.status().message().find("--max-program-bytes-per-session"),
            std::string::npos)
      << over_bytes.status().to_string();

  ASSERT_TRUE(core_->open_session("remote", SessionOwner::tcp_peer("10.1.2.3")).ok());
  auto same_host = core_->open_session("remote again", SessionOwner::tcp_peer("10.1.2.3"));
  ASSERT_FALSE(same_host.ok());
  EXPECT_NE(same_host.status().message().find("--max-sessions-per-peer"), std::string::npos)
      << same_host.status().to_string();
  EXPECT_TRUE(core_->open_session("another host", SessionOwner::tcp_peer("10.9.9.9"))
                  .ok());                          // another host
  EXPECT_TRUE(core_->open_session("local").ok());  // local clients: no cap
}

TEST_F(ServiceLimitsTest, M5_CallsPerSessionAreCapped) {
  ServiceLimits limits;
  limits.max_calls_per_session = 1;
  limits.execution_deadline = kBackstop;  // the endless call runs until the session ends
  start(limits);
  const uint64_t endless =
      load_method(session_, *load_program(session_, endless_program())).value();
  const uint64_t identity =
      load_method(session_, *load_program(session_, identity_program())).value();
  auto running = std::async(std::launch::async, [&] { return run(session_, endless, {}); });
  ASSERT_TRUE(eventually([&] { return session_->calls_running > 0; }));
  Status second = run(session_, identity, {inline_input()});
  EXPECT_EQ(second.code(), StatusCode::kResourceExhausted) << second.to_string();
  EXPECT_NE(second.message().find("--max-calls"), std::string::npos) << second.to_string();
  core_->close_session(session_);  // stops the endless call
  (void)running.get();
}

// VerifyProgram's cases execute on one of the --workers workers, as calls
// do: with the only worker busy, it waits for one and fails at the request deadline.
TEST_F(ServiceLimitsTest, M5_VerifyProgramWaitsForAWorker) {
  ServiceLimits limits;
  limits.max_concurrent_runs = 1;
  limits.execution_deadline = kBackstop;  // the endless call holds the worker until the end
  limits.request_deadline = std::chrono::milliseconds(100);
  start(limits);
  const uint64_t endless =
      load_method(session_, *load_program(session_, endless_program())).value();
  const uint64_t bundled = load_program(session_, fixture_bytes("mlp_bundled.bpte")).value();
  auto running = std::async(std::launch::async, [&] { return run(session_, endless, {}); });
  ASSERT_TRUE(eventually([&] { return core_->counts().executes > 0; }));  // it has the worker
  auto report = core_->verify_program(session_->token, bundled, {});
  EXPECT_EQ(report.status().code(), StatusCode::kDeadlineExceeded) << report.status().to_string();
  EXPECT_NE(report.status().message().find("no worker"), std::string::npos)
      << report.status().to_string();
  core_->close_session(session_);  // stops the endless call
  (void)running.get();
}

// M6: an execute is stopped at its deadline, and when its session ends.
TEST_F(ServiceLimitsTest, M6_ExecutionDeadlineStopsAnEndlessProgram) {
  ServiceLimits limits;
  limits.execution_deadline = std::chrono::milliseconds(50);
  start(limits);
  const uint64_t method = load_method(session_, *load_program(session_, endless_program())).value();
  Status s = run(session_, method, {});  // returns at all: the program never ends by itself
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.to_string();
  EXPECT_NE(s.message().find("execution deadline"), std::string::npos) << s.to_string();
}

TEST_F(ServiceLimitsTest, M6_ClosingTheSessionStopsItsExecute) {
  start({});
  const uint64_t method = load_method(session_, *load_program(session_, endless_program())).value();
  auto running = std::async(std::launch::async, [&] { return run(session_, method, {}); });
  ASSERT_TRUE(eventually([&] { return session_->calls_running > 0; }));
  core_->close_session(session_);  // waits for the running call: it must stop
  Status s = running.get();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
  EXPECT_NE(s.message().find("caller went away"), std::string::npos) << s.to_string();
}

// A call's own bounds (CallBounds, as gRPC's deadline and cancellation give them): a
// running execute stops at them, a queued call past them never runs, and the method
// instance stays usable.
CallBounds deadline_in(std::chrono::milliseconds ms) {
  CallBounds b;
  b.deadline = std::chrono::steady_clock::now() + ms;
  return b;
}

CallBounds gone_once_set(const std::atomic<bool>& flag) {
  CallBounds b;
  b.caller_gone = [](const void* f) { return static_cast<const std::atomic<bool>*>(f)->load(); };
  b.caller_gone_arg = &flag;
  return b;
}

TEST_F(ServiceLimitsTest, TheCallsDeadlineStopsARunningExecute) {
  start({});  // the daemon's own deadlines: a minute
  const uint64_t method = load_method(session_, *load_program(session_, endless_program())).value();
  Status s = run(session_, method, {}, deadline_in(std::chrono::milliseconds(50)));
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.to_string();
  EXPECT_NE(s.message().find("the call's deadline passed while its method ran"), std::string::npos)
      << s.to_string();
  // Usable again at once: the next call runs (and is stopped the same way).
  EXPECT_EQ(run(session_, method, {}, deadline_in(std::chrono::milliseconds(1))).code(),
            StatusCode::kDeadlineExceeded);
}

TEST_F(ServiceLimitsTest, ACallerThatGoesAwayStopsItsExecute) {
  start({});
  const uint64_t method = load_method(session_, *load_program(session_, endless_program())).value();
  std::atomic<bool> gone{false};
  auto running = std::async(std::launch::async,
                            [&] { return run(session_, method, {}, gone_once_set(gone)); });
  ASSERT_TRUE(eventually([&] { return core_->counts().executes > 0; }));
  gone = true;
  Status s = running.get();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
  EXPECT_NE(s.message().find("its caller went away"), std::string::npos) << s.to_string();
}

TEST_F(ServiceLimitsTest, ACallQueuedPastItsDeadlineNeverRuns) {
  start({});
  const uint64_t method = load_method(session_, *load_program(session_, endless_program())).value();
  std::atomic<bool> first_gone{false};
  auto first = std::async(std::launch::async,
                          [&] { return run(session_, method, {}, gone_once_set(first_gone)); });
  ASSERT_TRUE(eventually([&] { return core_->counts().executes == 1; }));
  // The method is busy: this call waits for it, and its deadline passes first.
  Status late = run(session_, method, {}, deadline_in(std::chrono::milliseconds(20)));
  EXPECT_EQ(late.code(), StatusCode::kDeadlineExceeded) << late.to_string();
  EXPECT_NE(late.message().find("did not run"), std::string::npos) << late.to_string();
  first_gone = true;
  EXPECT_EQ(first.get().code(), StatusCode::kUnavailable);
  // The instance is free: a call that is gone before it runs is refused without running.
  std::atomic<bool> already_gone{true};
  Status refused = run(session_, method, {}, gone_once_set(already_gone));
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable) << refused.to_string();
  EXPECT_NE(refused.message().find("before its call ran"), std::string::npos)
      << refused.to_string();
  EXPECT_EQ(core_->counts().executes, 1u);  // only the first ever executed
}

// L4: a program another host uploaded is not found by its hash from a TCP peer; the
// peer sends the bytes once, then its hash works. Local clients share by hash.
TEST_F(ServiceLimitsTest, L4_HashIsACapabilityOnlyForWhoSentTheBytes) {
  start({});
  ASSERT_TRUE(load_program(session_, fixture_bytes("mlp.pte")).ok());
  const std::string hash = sha256_;
  auto local = core_->open_session("local").value();
  EXPECT_TRUE(load_program(local, "", hash).ok());

  auto remote = core_->open_session("remote", SessionOwner::tcp_peer("10.1.2.3")).value();
  auto by_hash = load_program(remote, "", hash);
  ASSERT_FALSE(by_hash.ok());
  EXPECT_EQ(by_hash.status().code(), StatusCode::kNotFound) << by_hash.status().to_string();
  ASSERT_TRUE(load_program(remote, fixture_bytes("mlp.pte")).ok());
  auto remote_again =
      core_->open_session("remote again", SessionOwner::tcp_peer("10.1.2.3")).value();
  EXPECT_TRUE(load_program(remote_again, "", hash).ok());

  // Knowing the hash is not having the bytes: other bytes sent under it are refused
  // (they were once answered with the held program), and do not make the sender one
  // who may load it by hash.
  auto guesser = core_->open_session("another host", SessionOwner::tcp_peer("10.9.9.9")).value();
  auto forged = load_program(guesser, "not the program's bytes", hash);
  ASSERT_FALSE(forged.ok());
  EXPECT_EQ(forged.status().code(), StatusCode::kInvalidArgument) << forged.status().to_string();
  EXPECT_NE(forged.status().message().find("hash to"), std::string::npos);
  EXPECT_EQ(load_program(guesser, "", hash).status().code(), StatusCode::kNotFound);

  pb::ServerStatusResponse from_afar, from_here;
  ASSERT_TRUE(et_->server_status(from_afar, /*show_counts=*/false).ok());
  ASSERT_TRUE(et_->server_status(from_here).ok());
  EXPECT_EQ(from_afar.sessions(), 0u);  // not told about other tenants
  EXPECT_EQ(from_here.sessions(), 5u);
}

// L3: an output that is an input living in a segment, placed on an overlapping range
// of that segment, was memcpy'd onto itself (ASan: memcpy-param-overlap).
TEST_F(ServiceLimitsTest, L3_OverlappingPlacementIsCopiedSafely) {
  start({});
  const uint64_t method =
      load_method(session_, *load_program(session_, identity_program())).value();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const int fd = sealed_memfd(page);
  void* view = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(view, MAP_FAILED);
  auto* floats = static_cast<float*>(view);
  for (int i = 0; i < 4; ++i) floats[i] = static_cast<float>(i + 1);
  auto id = core_->register_segment(session_->token, fd);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  pb::RunRequest req;
  req.set_session(session_->token);
  req.set_method_handle(method);
  *req.add_inputs() = in_segment(*id);
  pb::SegmentRange& where = *req.add_placements()->mutable_segment();
  where.set_segment_id(*id);
  where.set_offset(4);  // one float on: the ranges overlap
  where.set_length(16);
  pb::RunResponse resp;
  Status s = et_->run(req, resp);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(floats[1], 1.0f);
  EXPECT_EQ(floats[4], 4.0f);
  munmap(view, page);
}

// M4: a client that sends requests and never reads the replies must not stall the
// descriptor socket for everyone else.
TEST_F(ServiceLimitsTest, M4_AClientThatNeverReadsCannotStallTheDescriptorSocket) {
  start({});
  char dir[] = "/tmp/et-limits-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/s.fd";
  auto channel = FdSocket::start(path, *et_);
  ASSERT_TRUE(channel.ok()) << channel.status().to_string();
  auto connect_to = [&] {
    const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    EXPECT_EQ(connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return sock;
  };
  const int greedy = connect_to();
  const int one = 1;
  ASSERT_EQ(setsockopt(greedy, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)), 0);  // fills fast
  et::wire::FdRequest junk{};
  std::memcpy(junk.magic, "JUNK", 4);
  size_t sent = 0;
  while (sent < 5000 && send(greedy, &junk, sizeof(junk), MSG_DONTWAIT | MSG_NOSIGNAL) > 0) {
    ++sent;
  }
  // Another client registers a segment through the same socket, as libetclient does.
  auto reply = std::async(std::launch::async, [&] {
    return et::wire::send_descriptor(path, session_->token, sealed_memfd(4096),
                                     et::wire::kFdRegisterSegment);
  });
  ASSERT_EQ(reply.wait_for(kBackstop), std::future_status::ready)
      << "the descriptor socket stalled behind a client that never reads (" << sent
      << " requests sent)";
  const et::wire::FdExchange got = reply.get();
  EXPECT_TRUE(got.delivered) << got.message;
  EXPECT_EQ(got.code, 0u) << got.message;
  close(greedy);
  channel->reset();
  rmdir(dir);
}

// L5: flatbuffers cannot read a buffer of 2^31 - 1 bytes or more (debug builds abort);
// the default program limit stays below it.
TEST(ServiceLimitsDefaults, L5_ProgramLimitIsBelowWhatFlatbuffersReads) {
  EXPECT_LT(ServiceLimits{}.max_program_bytes, size_t{FLATBUFFERS_MAX_BUFFER_SIZE});
}

}  // namespace
}  // namespace et::server
