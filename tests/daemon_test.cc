// et-serverd end to end: a real daemon process, real sockets, the test client.
#include "tests/support/daemon.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <latch>
#include <regex>
#include <thread>

#include "runtime/core/sanitizers.h"
#include "runtime/testing/program_builder.h"
#include "tests/support/eventually.h"

namespace et::testing {
namespace {

const std::string kModels = ET_FIXTURES_DIR;

// Sanitizer runtimes keep freed memory (ASan's quarantine) and shadow memory, so RSS
// says nothing about leaks there; LeakSanitizer does instead under ASan (a leak makes
// the daemon's exit status 23). The RSS check runs in the normal build.
using ::et::kSanitized;

std::vector<float> floats(const std::string& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

float max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

// Loads `model` and its `forward`, returns the method handle.
uint64_t load(TestClient& c, const std::string& model) {
  std::string error;
  const uint64_t program = c.load_program_file(kModels + "/" + model + ".pte", &error);
  EXPECT_NE(program, 0u) << error;
  const uint64_t method = c.load_method(program, "forward", &error);
  EXPECT_NE(method, 0u) << error;
  return method;
}

grpc::Status run(TestClient& c, uint64_t method, const std::string& model, pb::RunResponse& resp) {
  pb::RunRequest req;
  req.set_session(c.session());
  req.set_method_handle(method);
  *req.add_inputs()->mutable_tensor() = npy_tensor(kModels + "/" + model + "/forward.in0.npy");
  return c.run(req, &resp);
}

std::vector<float> expected(const std::string& model) {
  return floats(npy_tensor(kModels + "/" + model + "/forward.out0.npy").inline_data());
}

TEST(Daemon, RunsAProgramAndMatchesEager) {
  DaemonProcess daemon;
  TestClient c(daemon.socket());
  ASSERT_TRUE(c.connected()) << daemon.log();
  EXPECT_EQ(c.session().size(), 32u);
  const uint64_t method = load(c, "mlp");
  pb::RunResponse resp;
  grpc::Status s = run(c, method, "mlp", resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.outputs_size(), 1);
  EXPECT_LT(max_diff(floats(resp.outputs(0).tensor().inline_data()), expected("mlp")), 1e-5);
  EXPECT_EQ(resp.outputs(0).tensor().dtype(), pb::FLOAT32);
}

TEST(Daemon, SeparateSetInputsExecuteGetOutputs) {
  DaemonProcess daemon;
  TestClient c(daemon.socket());
  const uint64_t method = load(c, "cnn_xnnpack");
  pb::ExecuteRequest ex;
  ex.set_session(c.session());
  ex.set_method_handle(method);
  pb::ExecuteResponse ex_resp;
  grpc::Status early = c.execute(ex, &ex_resp);
  EXPECT_EQ(early.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << early.error_message();

  pb::SetInputsRequest set;
  set.set_session(c.session());
  set.set_method_handle(method);
  *set.add_inputs()->mutable_tensor() = npy_tensor(kModels + "/cnn_xnnpack/forward.in0.npy");
  pb::SetInputsResponse set_resp;
  ASSERT_TRUE(c.set_inputs(set, &set_resp).ok());
  ASSERT_TRUE(c.execute(ex, &ex_resp).ok());
  pb::GetOutputsRequest get;
  get.set_session(c.session());
  get.set_method_handle(method);
  pb::GetOutputsResponse out;
  ASSERT_TRUE(c.get_outputs(get, &out).ok());
  EXPECT_LT(max_diff(floats(out.outputs(0).tensor().inline_data()), expected("cnn_xnnpack")), 1e-5);
}

TEST(Daemon, BadInputsAreRefusedWithTheFieldNamed) {
  DaemonProcess daemon;
  TestClient c(daemon.socket());
  const uint64_t method = load(c, "mlp");
  pb::RunRequest req;
  req.set_session(c.session());
  req.set_method_handle(method);
  pb::Tensor* t = req.add_inputs()->mutable_tensor();
  *t = npy_tensor(kModels + "/mlp/forward.in0.npy");
  t->set_dtype(pb::FLOAT64);  // wrong dtype: byte count no longer matches either
  pb::RunResponse resp;
  grpc::Status s = c.run(req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("inputs[0]"), std::string::npos) << s.error_message();

  t->set_dtype(pb::FLOAT32);
  t->mutable_inline_data()->resize(8);
  s = c.run(req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("inline_data has 8 bytes"), std::string::npos)
      << s.error_message();

  // The daemon still serves the session afterwards.
  pb::RunResponse ok;
  EXPECT_TRUE(run(c, method, "mlp", ok).ok());
}

TEST(Daemon, SessionsCannotUseEachOthersIds) {
  DaemonProcess daemon;
  TestClient a(daemon.socket()), b(daemon.socket());
  const uint64_t method = load(a, "mlp");
  auto seg = a.create_segment(4096);
  ASSERT_NE(seg.id, 0u) << seg.error;

  pb::RunRequest req;  // b names a's method
  req.set_session(b.session());
  req.set_method_handle(method);
  pb::RunResponse resp;
  EXPECT_EQ(b.run(req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);

  pb::DropSegmentRequest drop;  // b names a's segment
  drop.set_session(b.session());
  drop.set_segment_id(seg.id);
  pb::DropSegmentResponse drop_resp;
  grpc::ClientContext ctx2;
  EXPECT_EQ(b.stub().DropSegment(&ctx2, drop, &drop_resp).error_code(),
            grpc::StatusCode::NOT_FOUND);

  pb::LoadMethodRequest lm;  // b names a's program
  lm.set_session(b.session());
  lm.set_program_id(1);
  pb::LoadMethodResponse lm_resp;
  grpc::ClientContext ctx3;
  EXPECT_EQ(b.stub().LoadMethod(&ctx3, lm, &lm_resp).error_code(), grpc::StatusCode::NOT_FOUND);

  if (b.uses_fast_path()) {
    // A channel belongs to the session that opened it: naming a's token in a request
    // on b's channel still runs in b's session.
    req.set_session(a.session());
    EXPECT_EQ(b.run(req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
    return;
  }
  req.set_session(std::string(32, '0'));  // a forged token
  grpc::Status forged = a.run(req, &resp);
  // UNAUTHENTICATED, not NOT_FOUND: a client tells "my session is gone (the daemon
  // restarted)" from "this id is wrong" by the code.
  EXPECT_EQ(forged.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(forged.error_message().find("session"), std::string::npos);
}

TEST(Daemon, ConcurrentSessionsOnDifferentAndSamePrograms) {
  DaemonProcess daemon({"--threads", "2"});
  const std::vector<std::string> models = {"mlp", "cnn_xnnpack", "mlp", "cnn"};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (const std::string& model : models) {
    threads.emplace_back([&, model] {
      TestClient c(daemon.socket());
      const uint64_t method = load(c, model);
      const std::vector<float> want = expected(model);
      for (int i = 0; i < 20; ++i) {
        pb::RunResponse resp;
        if (!run(c, method, model, resp).ok() ||
            max_diff(floats(resp.outputs(0).tensor().inline_data()), want) > 1e-4) {
          ++wrong;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  // Programs are shared by content: mlp was loaded by two sessions, once.
  EXPECT_NE(daemon.log().find("loaded"), std::string::npos);
}

TEST(Daemon, ARequestDeadlineEndsWaitingForABusyWorker) {
  // One worker, a 1 ms deadline: of two sessions running MobileNetV2 (several ms a
  // call) at once, calls that wait for the worker give up with DEADLINE_EXCEEDED.
  DaemonProcess daemon({"--workers", "1", "--request-deadline-ms", "1"});
  std::atomic<int> ok{0}, deadline{0}, other{0};
  std::latch loaded(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      TestClient c(daemon.socket());
      const uint64_t method = load(c, "mobilenet_v2_xnnpack");
      // The image in a segment: a request small enough for the fast path's channel.
      pb::Tensor image = npy_tensor(kModels + "/mobilenet_v2_xnnpack/forward.in0.npy");
      auto seg = c.create_segment(image.inline_data().size());
      std::memcpy(seg.data, image.inline_data().data(), seg.size);
      image.clear_inline_data();
      image.mutable_segment()->set_segment_id(seg.id);
      image.mutable_segment()->set_length(seg.size);
      pb::RunRequest req;
      req.set_session(c.session());
      req.set_method_handle(method);
      *req.add_inputs()->mutable_tensor() = image;
      loaded.arrive_and_wait();  // both call at once, however long either took to load
      for (int i = 0; i < 20; ++i) {
        pb::RunResponse resp;
        grpc::Status s = c.run(req, &resp);
        if (s.ok()) {
          ++ok;
        } else if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
          ++deadline;
        } else {
          ++other;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_GT(ok.load(), 0);
  EXPECT_GT(deadline.load(), 0) << "no call ever waited past the deadline";
  EXPECT_EQ(other.load(), 0);
}

TEST(Daemon, AnExecutionDeadlineStopsALongCall) {
  // MobileNetV2 on the portable kernels takes over 100 ms a call; 20 ms is allowed.
  DaemonProcess daemon({"--execution-deadline-ms", "20"});
  TestClient c(daemon.socket());
  const uint64_t method = load(c, "mobilenet_v2");
  auto seg = c.create_segment(3 * 224 * 224 * 4);
  pb::RunRequest req;
  req.set_session(c.session());
  req.set_method_handle(method);
  pb::Tensor* image = req.add_inputs()->mutable_tensor();
  image->set_dtype(pb::FLOAT32);
  for (int64_t size : {1, 3, 224, 224}) image->add_sizes(size);
  image->mutable_segment()->set_segment_id(seg.id);
  image->mutable_segment()->set_length(seg.size);
  pb::RunResponse resp;
  grpc::Status s = c.run(req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("deadline"), std::string::npos) << s.error_message();
  // The method is free again, and the next call is answered the same way.
  EXPECT_EQ(c.run(req, &resp).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
}

// A program that never ends by itself (one jump back to itself), in a file under `dir`.
std::string endless_program_file(const std::string& dir) {
  const std::vector<uint8_t> bytes = endless_program().finish();
  const std::string path = dir + "/endless.pte";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return path;
}

// A gRPC client's deadline and cancellation reach the call in the daemon: its execute
// stops, and the method is free at once. The daemon's own bounds are ten minutes and
// 10^15 instructions here (--vet off: the endless program is loaded, not tried in a
// sandbox first), so only the client's bounds can free the method for GetAttribute,
// which holds it.
class GrpcBounds : public ::testing::Test {
 protected:
  GrpcBounds()
      : daemon_({"--vet", "off", "--execution-deadline-ms", "600000", "--request-deadline-ms",
                 "600000", "--max-instructions", "1000000000000000"}),
        client_(daemon_.socket()) {
    std::string error;
    const uint64_t program =
        client_.load_program_file(endless_program_file(::testing::TempDir()), &error);
    EXPECT_NE(program, 0u) << error;
    method_ = client_.load_method(program, "forward", &error);
    EXPECT_NE(method_, 0u) << error;
    run_.set_session(client_.session());
    run_.set_method_handle(method_);
  }

  // Holds the method (as GetAttribute does) within the backstop: NOT_FOUND for a name
  // the program lacks once the method is free.
  grpc::Status hold_method() {
    pb::GetAttributeRequest req;
    req.set_session(client_.session());
    req.set_method_handle(method_);
    req.set_name("no_such_attribute");
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + kBackstop);
    pb::GetAttributeResponse resp;
    return client_.stub().GetAttribute(&ctx, req, &resp);
  }

  uint64_t executes() {
    grpc::ClientContext ctx;
    pb::ServerStatusResponse status;
    EXPECT_TRUE(client_.stub().ServerStatus(&ctx, pb::ServerStatusRequest(), &status).ok());
    return status.executes();
  }

  DaemonProcess daemon_;
  TestClient client_;
  uint64_t method_ = 0;
  pb::RunRequest run_;
};

TEST_F(GrpcBounds, TheClientsDeadlineStopsTheExecute) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  pb::RunResponse resp;
  EXPECT_EQ(client_.stub().Run(&ctx, run_, &resp).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  const grpc::Status held = hold_method();
  EXPECT_EQ(held.error_code(), grpc::StatusCode::NOT_FOUND) << held.error_message();
}

TEST_F(GrpcBounds, ACancelledCallStopsItsExecute) {
  grpc::ClientContext ctx;
  std::thread caller([&] {
    pb::RunResponse resp;
    EXPECT_EQ(client_.stub().Run(&ctx, run_, &resp).error_code(), grpc::StatusCode::CANCELLED);
  });
  ASSERT_TRUE(eventually([&] { return executes() == 1; }));
  ctx.TryCancel();
  caller.join();
  const grpc::Status held = hold_method();
  EXPECT_EQ(held.error_code(), grpc::StatusCode::NOT_FOUND) << held.error_message();
}

TEST_F(GrpcBounds, ACallQueuedPastTheClientsDeadlineNeverRuns) {
  grpc::ClientContext first_ctx;
  std::thread first([&] {
    pb::RunResponse resp;
    (void)client_.stub().Run(&first_ctx, run_, &resp);
  });
  ASSERT_TRUE(eventually([&] { return executes() == 1; }));
  grpc::ClientContext late_ctx;
  late_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  pb::RunResponse resp;
  EXPECT_EQ(client_.stub().Run(&late_ctx, run_, &resp).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  first_ctx.TryCancel();
  first.join();
  EXPECT_EQ(hold_method().error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(executes(), 1u);  // the late call never ran
}

TEST(Daemon, InputsAndOutputsThroughASegment) {
  DaemonProcess daemon;
  TestClient c(daemon.socket());
  const uint64_t method = load(c, "mlp");
  auto seg = c.create_segment(1 << 16);
  ASSERT_NE(seg.id, 0u) << seg.error;
  pb::Tensor in = npy_tensor(kModels + "/mlp/forward.in0.npy");
  std::memcpy(seg.data, in.inline_data().data(), in.inline_data().size());
  pb::RunRequest req;
  req.set_session(c.session());
  req.set_method_handle(method);
  pb::Tensor* t = req.add_inputs()->mutable_tensor();
  t->set_dtype(pb::FLOAT32);
  *t->mutable_sizes() = in.sizes();
  t->mutable_segment()->set_segment_id(seg.id);
  t->mutable_segment()->set_offset(0);
  t->mutable_segment()->set_length(in.inline_data().size());
  pb::SegmentRange* out = req.add_placements()->mutable_segment();
  out->set_segment_id(seg.id);
  out->set_offset(8192);
  out->set_length(4096);
  pb::RunResponse resp;
  grpc::Status s = c.run(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const pb::Tensor& o = resp.outputs(0).tensor();
  ASSERT_TRUE(o.has_segment());
  EXPECT_EQ(o.segment().offset(), 8192u);
  const std::vector<float> want = expected("mlp");
  std::vector<float> got(want.size());
  std::memcpy(got.data(), seg.data + 8192, got.size() * 4);
  EXPECT_LT(max_diff(got, want), 1e-5);

  // A reference past the segment's end.
  t->mutable_segment()->set_offset((1 << 16) - 8);
  grpc::Status past = c.run(req, &resp);
  EXPECT_EQ(past.error_code(), grpc::StatusCode::OUT_OF_RANGE) << past.error_message();
  EXPECT_NE(past.error_message().find("inputs[0].segment"), std::string::npos);
}

TEST(Daemon, LoadsALargeProgramFromASegmentAndSharesItByHash) {
  DaemonProcess daemon;
  TestClient a(daemon.socket()), b(daemon.socket());
  std::ifstream in(kModels + "/mobilenet_v2_xnnpack.pte", std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto seg = a.create_segment(bytes.size());
  ASSERT_NE(seg.id, 0u) << seg.error;
  std::memcpy(seg.data, bytes.data(), bytes.size());
  pb::LoadProgramRequest req;
  req.set_session(a.session());
  req.mutable_segment()->set_segment_id(seg.id);
  req.mutable_segment()->set_length(bytes.size());
  pb::LoadProgramResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = a.stub().LoadProgram(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(resp.already_loaded());
  ASSERT_EQ(resp.info().methods_size(), 1);
  EXPECT_EQ(resp.info().methods(0).backends(0), "XnnpackBackend");

  // Another session names it by hash alone: no bytes travel.
  pb::LoadProgramRequest by_hash;
  by_hash.set_session(b.session());
  by_hash.set_sha256(resp.sha256());
  pb::LoadProgramResponse shared;
  grpc::ClientContext ctx2;
  ASSERT_TRUE(b.stub().LoadProgram(&ctx2, by_hash, &shared).ok());
  EXPECT_TRUE(shared.already_loaded());

  // A hash the daemon does not have: NOT_FOUND, saying to send the bytes.
  by_hash.set_sha256(std::string(64, '0'));
  grpc::ClientContext ctx3;
  grpc::Status missing = b.stub().LoadProgram(&ctx3, by_hash, &shared);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(missing.error_message().find("send its bytes"), std::string::npos);
}

TEST(Daemon, LoadsByPathThroughTheCallersOwnDescriptor) {
  DaemonProcess daemon;
  TestClient c(daemon.socket());
  const int fd = open((kModels + "/mlp.pte").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto [code, id] = c.register_fd(fd, c.session(), 2);
  close(fd);
  ASSERT_EQ(code, 0u) << id;
  std::string error;
  const uint64_t method = c.load_method(std::stoull(id), "forward", &error);
  ASSERT_NE(method, 0u) << error;
  pb::RunResponse resp;
  ASSERT_TRUE(run(c, method, "mlp", resp).ok());
  EXPECT_LT(max_diff(floats(resp.outputs(0).tensor().inline_data()), expected("mlp")), 1e-5);

  const int dir = open(kModels.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  auto [dir_code, dir_message] = c.register_fd(dir, c.session(), 2);
  close(dir);
  EXPECT_NE(dir_code, 0u);
  EXPECT_NE(dir_message.find("not a regular file"), std::string::npos) << dir_message;
}

TEST(Daemon, ServesTcpWhenAsked) {
  // Port 0: the kernel picks a free one, which the daemon logs (no collision with a
  // port another process on this machine holds).
  DaemonProcess daemon({"--listen", "127.0.0.1:0"});
  std::smatch port;
  const std::regex logged(R"(127\.0\.0\.1:0 \(port (\d+)\))");
  std::string log;
  // The line may reach the log file a moment after the socket accepts (slow builds).
  EXPECT_TRUE(eventually([&] { return std::regex_search(log = daemon.log(), logged); }));
  ASSERT_TRUE(std::regex_search(log, port, logged)) << log;
  ASSERT_NE(port[1].str(), "0") << log;
  TestClient c("", "127.0.0.1:" + port[1].str());
  ASSERT_TRUE(c.connected()) << daemon.log();
  const uint64_t method = load(c, "mlp");
  pb::RunResponse resp;
  ASSERT_TRUE(run(c, method, "mlp", resp).ok());
  EXPECT_LT(max_diff(floats(resp.outputs(0).tensor().inline_data()), expected("mlp")), 1e-5);

  // The counts of everyone's sessions and memory are for local clients, not TCP peers.
  TestClient local(daemon.socket());
  ASSERT_TRUE(local.connected()) << daemon.log();
  auto status_of = [](TestClient& client) {
    grpc::ClientContext ctx;
    pb::ServerStatusResponse status;
    EXPECT_TRUE(client.stub().ServerStatus(&ctx, pb::ServerStatusRequest(), &status).ok());
    return status;
  };
  const pb::ServerStatusResponse from_tcp = status_of(c);
  EXPECT_FALSE(from_tcp.version().empty());
  EXPECT_EQ(from_tcp.sessions(), 0u);
  EXPECT_EQ(status_of(local).sessions(), 2u);
}

TEST(Daemon, RefusesUnsealedSegmentsAndNonMemfds) {
  DaemonProcess daemon;
  TestClient c(daemon.socket());
  auto unsealed = c.create_segment(4096, /*seal=*/false);
  EXPECT_EQ(unsealed.id, 0u);
  EXPECT_NE(unsealed.error.find("F_SEAL_SHRINK"), std::string::npos) << unsealed.error;
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  auto [code, message] = c.register_fd(p[0], c.session());
  EXPECT_NE(code, 0u);
  EXPECT_NE(message.find("memfd"), std::string::npos) << message;
  auto [code2, message2] = c.register_fd(-1, c.session());  // no descriptor
  EXPECT_NE(code2, 0u);
  EXPECT_NE(message2.find("descriptors"), std::string::npos) << message2;
  auto [code3, message3] = c.register_fd(p[0], std::string(32, 'f'));  // unknown session
  EXPECT_NE(code3, 0u);
  close(p[0]);
  close(p[1]);
}

TEST(Daemon, SealedSegmentsCannotShrinkAndRewritesDuringCallsAreHarmless) {
  DaemonProcess daemon;
  TestClient c(daemon.socket());
  const uint64_t method = load(c, "mobilenet_v2_xnnpack");
  pb::Tensor in = npy_tensor(kModels + "/mobilenet_v2_xnnpack/forward.in0.npy");
  auto seg = c.create_segment(in.inline_data().size());
  ASSERT_NE(seg.id, 0u) << seg.error;
  EXPECT_NE(ftruncate(seg.fd, 16), 0) << "the seal must stop shrinking";
  std::atomic<bool> stop{false};
  std::thread scribbler([&] {
    uint8_t x = 0;
    while (!stop) {  // rewrite it over and over, leaving the daemon some CPU
      std::memset(seg.data, x++, seg.size);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  for (int i = 0; i < 10; ++i) {
    pb::RunRequest req;
    req.set_session(c.session());
    req.set_method_handle(method);
    pb::Tensor* t = req.add_inputs()->mutable_tensor();
    t->set_dtype(pb::FLOAT32);
    *t->mutable_sizes() = in.sizes();
    t->mutable_segment()->set_segment_id(seg.id);
    t->mutable_segment()->set_length(seg.size);
    pb::RunResponse resp;
    (void)c.run(req, &resp);  // numbers are garbage; the daemon must live
  }
  stop = true;
  scribbler.join();
  TestClient other(daemon.socket());
  pb::ServerStatusResponse status;
  grpc::ClientContext ctx;
  EXPECT_TRUE(other.stub().ServerStatus(&ctx, {}, &status).ok()) << daemon.log();
}

TEST(Daemon, KilledClientsReleaseEverything) {
  DaemonProcess daemon;
  TestClient observer(daemon.socket());
  auto status = [&] {
    pb::ServerStatusResponse s;
    grpc::ClientContext ctx;
    EXPECT_TRUE(observer.stub().ServerStatus(&ctx, {}, &s).ok());
    return s;
  };
  auto kill_one = [&](int delay_ms) {
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string model = kModels + "/cnn_xnnpack.pte";
      const std::string input = kModels + "/cnn_xnnpack/forward.in0.npy";
      execl(ET_DAEMON_RUN_PATH, ET_DAEMON_RUN_PATH, "--socket", daemon.socket().c_str(),
            model.c_str(), "--input", input.c_str(), "--calls", "1000000", "--via-segments",
            "--output-dir", "/tmp", static_cast<char*>(nullptr));
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
  };
  for (int i = 0; i < 10; ++i) kill_one(150);  // warm up allocator pools
  // Wait for the daemon to notice the last kill.
  EXPECT_TRUE(eventually([&] { return status().sessions() <= 1; }));
  const long baseline = daemon.rss_kb();
  for (int i = 0; i < 100; ++i) kill_one(50 + (i % 5) * 30);
  EXPECT_TRUE(eventually([&] { return status().sessions() <= 1; }));
  const pb::ServerStatusResponse after = status();
  EXPECT_EQ(after.sessions(), 1u) << "only the observer's session is left";
  EXPECT_EQ(after.method_instances(), 0u);
  EXPECT_EQ(after.segments(), 0u);
  const long grown = daemon.rss_kb() - baseline;
  std::printf("daemon RSS after 100 SIGKILLed clients: %ld KiB baseline, %+ld KiB\n", baseline,
              grown);
  if (!kSanitized) {
    EXPECT_LT(grown, 16 * 1024) << "RSS grew by " << grown << " KiB over 100 killed clients";
  }
  // Nothing named in /dev/shm: segments are memfds.
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    EXPECT_EQ(e.path().filename().string().find("et-"), std::string::npos) << e.path();
  }
  EXPECT_EQ(daemon.stop(), 0) << "a clean exit (under ASan: no leaks)\n" << daemon.log();
}

TEST(Daemon, SigtermExitsCleanlyAndRemovesTheSocket) {
  DaemonProcess daemon;
  { TestClient c(daemon.socket()); }
  EXPECT_EQ(daemon.stop(), 0) << daemon.log();
  EXPECT_FALSE(std::filesystem::exists(daemon.socket()));
  EXPECT_FALSE(std::filesystem::exists(daemon.socket() + ".fd"));
}

TEST(Daemon, ReplacesAStaleSocketButNotALiveOne) {
  char tmpl[] = "/tmp/et-stale-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/s.sock";
  {  // a socket file nobody listens on, as a crashed daemon leaves
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    close(fd);
  }
  DaemonProcess live({"--socket", path});
  EXPECT_NE(live.log().find("stale"), std::string::npos) << live.log();
  TestClient c(path);
  EXPECT_TRUE(c.connected());

  const pid_t second = fork();
  if (second == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    dup2(devnull, 1);
    execl(ET_SERVERD_PATH, ET_SERVERD_PATH, "--socket", path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int st = 0;
  waitpid(second, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << "a second daemon must refuse the socket";
  TestClient still(path);
  EXPECT_TRUE(still.connected()) << "the live daemon keeps its socket";
  live.stop();
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace et::testing
