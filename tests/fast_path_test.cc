// The fast path (docs/fast_path.md) end to end: a hostile client writing anything into
// its channel, channels bound to their session, liveness both ways (a client that dies
// mid-call, a daemon killed or stopped while a client waits), caller-given output
// buffers, and the fall-backs to gRPC (a daemon without the fast path, a refused
// channel). The execute suites run on both transports besides (tests/CMakeLists.txt).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>

#include "etclient/client.h"
#include "tests/support/client_testing.h"
#include "tests/support/eventually.h"
#include "tests/support/fast_test_channel.h"

namespace et::testing {
namespace {

using et::wire::FastCall;
using et::wire::MessageHeader;
using Clock = std::chrono::steady_clock;

uint64_t load(TestClient& c, const std::string& model) {
  std::string error;
  const uint64_t program = c.load_program_file(kFixtures + "/" + model + ".pte", &error);
  EXPECT_NE(program, 0u) << error;
  const uint64_t method = c.load_method(program, "forward", &error);
  EXPECT_NE(method, 0u) << error;
  return method;
}

pb::RunRequest mlp_request(TestClient& c, uint64_t method) {
  pb::RunRequest req;
  req.set_session(c.session());
  req.set_method_handle(method);
  *req.add_inputs()->mutable_tensor() = npy_tensor(kFixtures + "/mlp/forward.in0.npy");
  return req;
}

// Writes a raw request (header fields as given, then `body`) and waits for its answer.
MessageHeader raw_call(FastTestChannel& ch, uint32_t kind, uint32_t length, const std::string& body,
                       std::string* answer) {
  const et::wire::ChannelLayout layout = et::wire::channel_layout(ch.size());
  const uint32_t seq = ch.next_seq();
  const MessageHeader head{kind, length, seq, 0};
  std::memcpy(ch.base() + layout.request_offset, &head, sizeof(head));
  std::memcpy(ch.base() + layout.request_offset + sizeof(head), body.data(),
              std::min(body.size(), layout.message_capacity()));
  ch.ring(seq);
  MessageHeader out{};
  if (!ch.wait(seq, static_cast<int>(std::chrono::milliseconds(kBackstop).count()))) return out;
  std::memcpy(&out, ch.base() + layout.response_offset, sizeof(out));
  answer->assign(reinterpret_cast<const char*>(ch.base() + layout.response_offset + sizeof(out)),
                 std::min<size_t>(out.length, layout.message_capacity()));
  return out;
}

// 'T' when every thread of the process is stopped, else the state letter of the first
// one that is not (from /proc/PID/task/TID/stat).
char process_state(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream in(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    const char state =
        paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
    if (state != 'T') return state;
  }
  return ec ? '?' : 'T';
}

TEST(FastPath, AHostileChannelGetsErrorsAndTheDaemonServesOn) {
  DaemonProcess daemon;
  TestClient c(daemon.socket()), victim(daemon.socket());
  const uint64_t method = load(c, "mlp");
  const uint64_t victim_method = load(victim, "mlp");
  std::string error;
  auto ch = FastTestChannel::open(c.fd_socket(), c.session(), &error);
  ASSERT_TRUE(ch) << error;
  std::string answer;
  // A length past the request area, an unknown kind, bytes that are no message.
  MessageHeader out = raw_call(*ch, 1, 0xffffffffu, "", &answer);
  EXPECT_EQ(out.kind_or_code, 3u) << answer;  // INVALID_ARGUMENT
  EXPECT_NE(answer.find("request area holds"), std::string::npos) << answer;
  out = raw_call(*ch, 99, 0, "", &answer);
  EXPECT_EQ(out.kind_or_code, 3u);
  EXPECT_NE(answer.find("unknown request kind 99"), std::string::npos) << answer;
  out = raw_call(*ch, 1, 7, "\xff\xff\xff\xff\xff\xff\xff", &answer);
  EXPECT_EQ(out.kind_or_code, 3u);
  EXPECT_NE(answer.find("not a valid RunRequest"), std::string::npos) << answer;
  // Scribbling over the daemon's own words and the response area changes nothing for it.
  std::memset(ch->base() + 64, 0xff, 8);
  out = raw_call(*ch, 1, 0, "", &answer);     // an empty RunRequest: method 0
  EXPECT_EQ(out.kind_or_code, 5u) << answer;  // NOT_FOUND, as over gRPC
  // A well-formed call on the same channel still works, and so does everyone else.
  pb::RunResponse resp;
  EXPECT_TRUE(ch->call(FastCall::kRun, mlp_request(c, method), resp).ok());
  pb::RunResponse victim_resp;
  grpc::Status s = victim.run(mlp_request(victim, victim_method), &victim_resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const std::string& got = victim_resp.outputs(0).tensor().inline_data();
  const std::vector<float> want = npy_floats("mlp/forward.out0.npy");
  ASSERT_EQ(got.size(), want.size() * 4);
  for (size_t i = 0; i < want.size(); ++i) {
    float v;
    std::memcpy(&v, got.data() + 4 * i, 4);
    EXPECT_NEAR(v, want[i], 1e-5);
  }
}

TEST(FastPath, ChannelsOfWrongSizeOrUnsealedAreRefused) {
  DaemonProcess daemon;
  TestClient c(daemon.socket());
  std::string error;
  EXPECT_FALSE(FastTestChannel::open(c.fd_socket(), c.session(), &error, 4096));
  EXPECT_NE(error.find("multiple of 4096 between"), std::string::npos) << error;
  EXPECT_FALSE(FastTestChannel::open(c.fd_socket(), c.session(), &error, 3 * 4096 + 1));
  EXPECT_NE(error.find("multiple of 4096"), std::string::npos) << error;
  EXPECT_FALSE(FastTestChannel::open(c.fd_socket(), std::string(32, '0'), &error));
  EXPECT_NE(error.find("session"), std::string::npos) << error;
}

TEST(FastPath, ARequestNeverReachesAnotherSession) {
  DaemonProcess daemon;
  TestClient a(daemon.socket()), b(daemon.socket());
  const uint64_t method = load(a, "mlp");
  std::string error;
  auto b_channel = FastTestChannel::open(b.fd_socket(), b.session(), &error);
  ASSERT_TRUE(b_channel) << error;
  pb::RunRequest req = mlp_request(a, method);  // a's token and a's method
  pb::RunResponse resp;
  grpc::Status s = b_channel->call(FastCall::kRun, req, resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
}

TEST(FastPath, AClientClosingItsChannelEndsTheDaemonsThread) {
  DaemonProcess daemon;
  TestClient c(daemon.socket());
  const uint64_t method = load(c, "mlp");
  std::string error;
  {
    auto ch = FastTestChannel::open(c.fd_socket(), c.session(), &error);
    ASSERT_TRUE(ch) << error;
    pb::RunRequest req = mlp_request(c, method);
    pb::RunResponse resp;
    grpc::Status s = ch->call(FastCall::kRun, req, resp);  // its thread serves
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  // The thread says so as it returns (the gauge of live channels drops with it).
  EXPECT_TRUE(eventually([&] {
    return daemon.log().find("a fast-path channel closed") != std::string::npos;
  })) << daemon.log();
}

TEST(FastPath, AClientKilledMidCallLeavesTheDaemonServing) {
  DaemonProcess daemon;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    // A client that starts a long call and is killed while it runs.
    TestClient c(daemon.socket());
    const uint64_t method = load(c, "mobilenet_v2");
    pb::RunRequest req;
    req.set_session(c.session());
    req.set_method_handle(method);
    auto seg = c.create_segment(3 * 224 * 224 * 4);
    auto* t = req.add_inputs()->mutable_tensor();
    t->set_dtype(pb::FLOAT32);
    for (int64_t s : {1, 3, 224, 224}) t->add_sizes(s);
    t->mutable_segment()->set_segment_id(seg.id);
    t->mutable_segment()->set_length(seg.size);
    for (bool first = true;; first = false) {
      pb::RunResponse resp;
      (void)c.run(req, &resp);
      if (first) (void)!write(ready[1], "r", 1);  // the next call is the one killed
    }
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);  // the client has a call in flight now
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  kill(child, SIGKILL);
  close(ready[0]);
  close(ready[1]);
  waitpid(child, nullptr, 0);
  TestClient other(daemon.socket());
  const uint64_t method = load(other, "mlp");
  pb::RunResponse resp;
  grpc::Status s = other.run(mlp_request(other, method), &resp);
  EXPECT_TRUE(s.ok()) << s.error_message() << daemon.log();
  // The killed client's session and its channel went with it.
  EXPECT_TRUE(eventually([&] {
    return daemon.log().find("1 fast-path channel(s)") != std::string::npos;
  })) << daemon.log();
}

TEST(FastPath, OneSessionsLongCallDoesNotHoldUpAnothers) {
  // Two workers whatever the machine (the default is one per core: one on a machine
  // of one core, or of two hyperthreads of one, where the short call must wait).
  DaemonProcess daemon({"--workers", "2"});
  std::atomic<int> long_calls_done{0};
  std::atomic<bool> stop{false};
  std::thread long_caller([&] {
    TestClient a(daemon.socket());
    const uint64_t method = load(a, "mobilenet_v2");  // portable kernels: a slow call
    auto seg = a.create_segment(3 * 224 * 224 * 4);
    pb::RunRequest req;
    req.set_session(a.session());
    req.set_method_handle(method);
    auto* t = req.add_inputs()->mutable_tensor();
    t->set_dtype(pb::FLOAT32);
    for (int64_t s : {1, 3, 224, 224}) t->add_sizes(s);
    t->mutable_segment()->set_segment_id(seg.id);
    t->mutable_segment()->set_length(seg.size);
    while (!stop) {
      pb::RunResponse resp;
      EXPECT_TRUE(a.run(req, &resp).ok());
      ++long_calls_done;
    }
  });
  TestClient b(daemon.socket());
  const uint64_t short_method = load(b, "mlp");
  ASSERT_TRUE(eventually([&] { return long_calls_done > 0; }));
  // A short call made while a long call of another session runs ends before it does
  // (either one ordering is enough: run several in case one lands at a call's very end,
  // or is preempted across one on a busy machine).
  bool overtook = false;
  for (int attempt = 0; attempt < 20 && !overtook; ++attempt) {
    const int before = long_calls_done;
    pb::RunResponse resp;
    ASSERT_TRUE(b.run(mlp_request(b, short_method), &resp).ok());
    overtook = long_calls_done == before;
  }
  stop = true;
  long_caller.join();
  EXPECT_TRUE(overtook) << "every short call waited for the other session's long call";
}

std::unique_ptr<etclient::Method> client_method(std::shared_ptr<etclient::Client>& client,
                                                const std::string& socket, const std::string& model,
                                                etclient::ClientOptions options = {}) {
  options.socket = socket;
  auto connected = etclient::Client::connect(options);
  EXPECT_TRUE(connected.ok()) << connected.status().message();
  if (!connected.ok()) return nullptr;
  client = *connected;
  auto program = client->load_program(kFixtures + "/" + model + ".pte");
  EXPECT_TRUE(program.ok()) << program.status().message();
  if (!program.ok()) return nullptr;
  auto method = (*program)->load_method();
  EXPECT_TRUE(method.ok()) << method.status().message();
  return method.ok() ? std::move(method).value() : nullptr;
}

// Seen by the channel's link, not by running out the call's deadline (which would say
// DEADLINE_EXCEEDED after the daemon's deadlines plus 5 s).
TEST(FastPath, AKilledDaemonIsSeenByItsLinkNotByADeadline) {
  DaemonProcess daemon;
  std::shared_ptr<etclient::Client> client;
  etclient::ClientOptions options;
  options.reconnect_timeout = std::chrono::milliseconds(0);
  auto method = client_method(client, daemon.socket(), "mobilenet_v2", options);
  ASSERT_TRUE(method);
  ASSERT_STREQ(method->transport(), "fast");
  auto input = method->empty_input(0);
  ASSERT_TRUE(input.ok());
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));  // most often mid-call
    daemon.kill_now();
    killed = true;
  });
  // Calls until one fails: the kill lands during a call or between two (a loaded
  // machine may finish the first call before it); either way the link tells.
  std::optional<etclient::Result<std::vector<etclient::SharedTensor>>> out;
  const auto give_up = Clock::now() + kBackstop;
  do {
    out.emplace(method->execute({*input}));
  } while (out->ok() && Clock::now() < give_up);
  killer.join();
  ASSERT_TRUE(killed);
  ASSERT_FALSE(out->ok());
  EXPECT_EQ(out->status().code(), etclient::StatusCode::kUnavailable) << out->status().message();
}

TEST(FastPath, AStoppedDaemonEndsTheWaitAfterItsDeadlines) {
  // Deadlines short enough to keep the wait short, long enough for the calls that must
  // succeed (an mlp call: microseconds) on a busy machine under sanitizers.
  DaemonProcess daemon({"--request-deadline-ms", "1000", "--execution-deadline-ms", "1000"});
  std::shared_ptr<etclient::Client> client;
  auto method = client_method(client, daemon.socket(), "mlp");
  ASSERT_TRUE(method);
  auto input = method->empty_input(0);
  ASSERT_TRUE(input.ok());
  ASSERT_TRUE(method->execute({*input}).ok());
  kill(daemon.pid(), SIGSTOP);
  // kill() returns before the daemon's threads have stopped: wait until it has.
  ASSERT_TRUE(eventually([&] { return process_state(daemon.pid()) == 'T'; }));
  const auto start = Clock::now();
  auto out = method->execute({*input});
  const auto waited = Clock::now() - start;
  kill(daemon.pid(), SIGCONT);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), etclient::StatusCode::kDeadlineExceeded) << out.status().message();
  EXPECT_GE(waited, std::chrono::milliseconds(7000));  // its deadlines, plus 5 s: not sooner
  // The next call opens a new channel and works.
  auto again = method->execute({*input});
  EXPECT_TRUE(again.ok()) << again.status().message();
  EXPECT_STREQ(method->transport(), "fast");
}

TEST(FastPath, ResultsGoIntoTheCallersOwnBuffers) {
  DaemonProcess daemon;
  std::shared_ptr<etclient::Client> client;
  auto method = client_method(client, daemon.socket(), "mlp");
  ASSERT_TRUE(method);
  std::vector<int64_t> sizes;
  const std::vector<float> x = npy_floats("mlp/forward.in0.npy", &sizes);
  auto input = method->empty_input(0);
  ASSERT_TRUE(input.ok());
  std::memcpy(input->data(), x.data(), x.size() * 4);
  auto outputs = method->output_buffers();
  ASSERT_TRUE(outputs.ok()) << outputs.status().message();
  void* where = (*outputs)[0].data();
  for (int call = 0; call < 3; ++call) {
    etclient::Status s = method->execute({*input}, *outputs);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ((*outputs)[0].data(), where);
    EXPECT_LT(max_diff((*outputs)[0], npy_floats("mlp/forward.out0.npy")), 1e-5);
  }
  auto tiny = client->empty(etclient::DType::kFloat32, {1});
  ASSERT_TRUE(tiny.ok());
  std::vector<etclient::SharedTensor> too_small = {*tiny};
  etclient::Status s = method->execute({*input}, too_small);
  EXPECT_EQ(s.code(), etclient::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("outputs[0]: 64 bytes"), std::string::npos) << s.message();
  std::vector<etclient::SharedTensor> none;
  s = method->execute({*input}, none);
  EXPECT_NE(s.message().find("0 tensors given"), std::string::npos) << s.message();
}

TEST(FastPath, ADaemonWithoutItServesEveryCallOverGrpc) {
  DaemonProcess daemon({"--no-fast-path"});
  std::shared_ptr<etclient::Client> client;
  auto method = client_method(client, daemon.socket(), "mlp");
  ASSERT_TRUE(method);
  EXPECT_STREQ(method->transport(), "grpc");
  auto input = method->empty_input(0);
  ASSERT_TRUE(input.ok());
  EXPECT_TRUE(method->execute({*input}).ok());
  TestClient c(daemon.socket());
  std::string error;
  EXPECT_FALSE(FastTestChannel::open(c.fd_socket(), c.session(), &error));
  EXPECT_NE(error.find("--no-fast-path"), std::string::npos) << error;
}

TEST(FastPath, ARefusedChannelFallsBackToGrpc) {
  DaemonProcess daemon({"--max-fast-channels-per-session", "1"});
  std::shared_ptr<etclient::Client> client;
  auto first = client_method(client, daemon.socket(), "mlp");
  ASSERT_TRUE(first);
  auto program = client->load_program(kFixtures + "/mlp.pte");
  ASSERT_TRUE(program.ok());
  auto second = (*program)->load_method();
  ASSERT_TRUE(second.ok());
  EXPECT_STREQ(first->transport(), "fast");
  EXPECT_STREQ((*second)->transport(), "grpc");
  auto input = first->empty_input(0);
  ASSERT_TRUE(input.ok());
  EXPECT_TRUE(first->execute({*input}).ok());
  EXPECT_TRUE((*second)->execute({*input}).ok());
}

TEST(FastPath, AClosedChannelGivesItsPlaceBack) {
  // One channel in all: another session gets it once the first one's link closed.
  DaemonProcess daemon({"--max-fast-channels", "1"});
  TestClient a(daemon.socket()), b(daemon.socket());
  std::string error;
  {
    auto first = FastTestChannel::open(a.fd_socket(), a.session(), &error);
    ASSERT_TRUE(first) << error;
    EXPECT_FALSE(FastTestChannel::open(b.fd_socket(), b.session(), &error));
    EXPECT_NE(error.find("--max-fast-channels"), std::string::npos) << error;
  }
  std::unique_ptr<FastTestChannel> second;
  EXPECT_TRUE(eventually([&] {  // once the first channel's thread ended
    second = FastTestChannel::open(b.fd_socket(), b.session(), &error);
    return second != nullptr;
  })) << error;
}

TEST(FastPath, TheTransportOptionAndVariableForceGrpc) {
  DaemonProcess daemon;
  std::shared_ptr<etclient::Client> client;
  etclient::ClientOptions options;
  options.transport = etclient::Transport::kGrpc;
  auto forced = client_method(client, daemon.socket(), "mlp", options);
  ASSERT_TRUE(forced);
  EXPECT_STREQ(forced->transport(), "grpc");
  const char* env = std::getenv("ETSERVER_TRANSPORT");
  const bool grpc_forced = env && std::string(env) == "grpc";
  std::shared_ptr<etclient::Client> other;
  auto by_default = client_method(other, daemon.socket(), "mlp");
  ASSERT_TRUE(by_default);
  EXPECT_STREQ(by_default->transport(), grpc_forced ? "grpc" : "fast");
}

}  // namespace
}  // namespace et::testing
