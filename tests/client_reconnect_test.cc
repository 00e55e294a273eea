// libetclient across daemon restarts: the daemon is SIGKILLed and started again on the
// same socket (as systemd would); the client's next call re-creates its session,
// segments, programs and methods and reports, once per method, that state was lost.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "etclient/client.h"
#include "tests/support/client_testing.h"
#include "tests/support/eventually.h"

namespace et::testing {
namespace {

const std::string& kModels = kFixtures;
using etclient::DType;
using etclient::HostTensor;
using etclient::StatusCode;

// `spawn`: whether the client may start a daemon of its own when none answers (it finds
// one to start only through ETSERVER_BIN or PATH).
std::shared_ptr<etclient::Client> connect(const DaemonProcess& daemon,
                                          std::chrono::milliseconds reconnect,
                                          std::optional<bool> spawn = std::nullopt) {
  etclient::ClientOptions options{daemon.socket(), "client_reconnect_test", reconnect};
  options.spawn = spawn;
  auto client = etclient::Client::connect(options);
  EXPECT_TRUE(client.ok()) << client.status().message();
  return client.ok() ? *client : nullptr;
}

// A client that may start a daemon (the default) and finds only one that cannot start:
// what a client meets when a supervisor restarts the daemon and the client has no
// et-serverd of its own to start (ETSERVER_BIN, which comes first, names none).
std::shared_ptr<etclient::Client> connect_unable_to_start(const DaemonProcess& daemon) {
  setenv("ETSERVER_BIN", "/nonexistent/et-serverd", 1);
  return connect(daemon, kBackstop, /*spawn=*/true);
}

TEST(ClientReconnect, RecreatesEverythingAndReportsLostStateOnce) {
  DaemonProcess daemon;
  auto client = connect(daemon, kBackstop);
  ASSERT_TRUE(client);
  // State: mutable_buffer adds each input to a buffer and returns the buffer.
  auto stateful = client->load_program(kModels + "/mutable_buffer.pte");
  ASSERT_TRUE(stateful.ok()) << stateful.status().message();
  auto counter = (*stateful)->load_method();
  ASSERT_TRUE(counter.ok()) << counter.status().message();
  std::vector<int64_t> sizes;
  const auto x0 = npy_floats("mutable_buffer/forward.in0.npy", &sizes);
  const auto x1 = npy_floats("mutable_buffer/forward.call1.in0.npy");
  ASSERT_TRUE((*counter)->execute({HostTensor{x0.data(), DType::kFloat32, sizes, {}}}).ok());

  // A program the client loaded from bytes it no longer holds, with a shared input.
  std::vector<int64_t> add_sizes;
  const auto a = npy_floats("add_unplanned_io/forward.in0.npy", &add_sizes);
  const auto b = npy_floats("add_unplanned_io/forward.in1.npy");
  const auto sum = npy_floats("add_unplanned_io/forward.out0.npy");
  std::shared_ptr<etclient::Program> adder;
  {
    std::ifstream in(kModels + "/add_unplanned_io.pte", std::ios::binary);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    auto loaded = client->load_program_bytes(bytes);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    adder = *loaded;
  }
  auto add = adder->load_method();
  ASSERT_TRUE(add.ok());
  auto shared_a = client->empty(DType::kFloat32, add_sizes);
  ASSERT_TRUE(shared_a.ok());
  std::memcpy(shared_a->data(), a.data(), a.size() * 4);
  const HostTensor host_b{b.data(), DType::kFloat32, add_sizes, {}};
  auto before = (*add)->execute({*shared_a, host_b});
  ASSERT_TRUE(before.ok()) << before.status().message();

  daemon.kill_and_restart();

  // The first call of each method reports the restart, having re-created it.
  auto aborted = (*counter)->execute({HostTensor{x1.data(), DType::kFloat32, sizes, {}}});
  ASSERT_FALSE(aborted.ok());
  EXPECT_EQ(aborted.status().code(), StatusCode::kAborted);
  EXPECT_NE(aborted.status().message().find("state"), std::string::npos)
      << aborted.status().message();
  // The next runs on fresh state: the buffer holds x1 alone, not x0 + x1.
  auto fresh = (*counter)->execute({HostTensor{x1.data(), DType::kFloat32, sizes, {}}});
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_LT(max_diff((*fresh)[0], x1), 1e-6);
  EXPECT_GT(max_diff((*fresh)[0], npy_floats("mutable_buffer/forward.call1.out0.npy")), 1e-3);

  // The other method was re-created from the kept bytes; the shared tensor made before
  // the restart is registered with the new daemon.
  auto add_aborted = (*add)->execute({*shared_a, host_b});
  EXPECT_EQ(add_aborted.status().code(), StatusCode::kAborted);
  auto after = (*add)->execute({*shared_a, host_b});
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_LT(max_diff((*after)[0], sum), 1e-6);
  EXPECT_LT(max_diff((*before)[0], sum), 1e-6);  // a result from the old daemon is intact

  // Loading needs no second try: it reconnects and retries by itself.
  auto again = (*stateful)->load_method();
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE((*again)->execute({HostTensor{x0.data(), DType::kFloat32, sizes, {}}}).ok());
  EXPECT_NE(daemon.log().find("session"), std::string::npos);
}

TEST(ClientReconnect, LoadingAfterARestartNeedsNoRetry) {
  DaemonProcess daemon;
  auto client = connect(daemon, kBackstop);
  ASSERT_TRUE(client);
  daemon.kill_and_restart();
  auto program = client->load_program(kModels + "/mlp.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  std::vector<int64_t> sizes;
  const auto x = npy_floats("mlp/forward.in0.npy", &sizes);
  auto out = (*method)->execute({HostTensor{x.data(), DType::kFloat32, sizes, {}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_LT(max_diff((*out)[0], npy_floats("mlp/forward.out0.npy")), 1e-5);
}

// A profile lives in the daemon's instance of the method: a restart loses it, and
// stop_profile() says so with kAborted, whether it is the first call after the restart
// or another call re-created the method first. Then no profile is running.
TEST(ClientReconnect, ARestartLosesTheProfile) {
  DaemonProcess daemon;
  auto client = connect(daemon, kBackstop);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/mlp.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  std::vector<int64_t> sizes;
  const auto x = npy_floats("mlp/forward.in0.npy", &sizes);
  const std::vector<etclient::Input> inputs{HostTensor{x.data(), DType::kFloat32, sizes, {}}};

  auto none = (*method)->stop_profile();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  for (const bool call_first : {false, true}) {
    ASSERT_TRUE((*method)->start_profile().ok());
    ASSERT_TRUE((*method)->execute(inputs).ok());
    daemon.kill_and_restart();
    if (call_first) {
      EXPECT_EQ((*method)->execute(inputs).status().code(), StatusCode::kAborted);
      ASSERT_TRUE((*method)->execute(inputs).ok());
    }
    auto lost = (*method)->stop_profile();
    ASSERT_FALSE(lost.ok()) << "call_first " << call_first;
    EXPECT_EQ(lost.status().code(), StatusCode::kAborted) << lost.status().message();
    EXPECT_NE(lost.status().message().find("profile was lost"), std::string::npos)
        << lost.status().message();
    EXPECT_EQ((*method)->stop_profile().status().code(), StatusCode::kFailedPrecondition);
  }
  ASSERT_TRUE((*method)->start_profile(1).ok());
  ASSERT_TRUE((*method)->execute(inputs).ok());
  ASSERT_TRUE((*method)->execute(inputs).ok());
  auto profile = (*method)->stop_profile({.etdump = true});
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  EXPECT_EQ(profile->executes, 1u);
  EXPECT_EQ(profile->dropped, 1u);
  EXPECT_FALSE(profile->etdump.empty());
  EXPECT_TRUE(profile->chrome_trace.empty());  // not asked for
}

// A program with its weights in a .ptd is reloaded with it after a restart: from the
// files (read again, checked unchanged), and from the bytes the client kept.
TEST(ClientReconnect, ProgramsWithExternalDataAreReloadedWithIt) {
  DaemonProcess daemon;
  auto client = connect(daemon, kBackstop);
  ASSERT_TRUE(client);
  auto from_files =
      client->load_program(kModels + "/mlp_ptd_xnnpack.pte", kModels + "/mlp_ptd_xnnpack.ptd");
  ASSERT_TRUE(from_files.ok()) << from_files.status().message();
  EXPECT_EQ((*from_files)->data_sha256().size(), 64u);
  std::shared_ptr<etclient::Program> from_bytes;
  {
    std::ifstream pte(kModels + "/cnn_ptd.pte", std::ios::binary);
    std::ifstream ptd(kModels + "/cnn_ptd.ptd", std::ios::binary);
    std::vector<uint8_t> program{std::istreambuf_iterator<char>(pte), {}};
    std::vector<uint8_t> data{std::istreambuf_iterator<char>(ptd), {}};
    auto loaded = client->load_program_bytes(program, data);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    from_bytes = *loaded;
  }
  daemon.kill_and_restart();
  for (const auto& [program, model] : {std::pair{*from_files, std::string("mlp_ptd_xnnpack")},
                                       std::pair{from_bytes, std::string("cnn_ptd")}}) {
    auto method = program->load_method();
    ASSERT_TRUE(method.ok()) << model << ": " << method.status().message();
    std::vector<int64_t> sizes;
    const auto x = npy_floats(model + "/forward.in0.npy", &sizes);
    auto out = (*method)->execute({HostTensor{x.data(), DType::kFloat32, sizes, {}}});
    ASSERT_TRUE(out.ok()) << model << ": " << out.status().message();
    EXPECT_LT(max_diff((*out)[0], npy_floats(model + "/forward.out0.npy")), 1e-4) << model;
  }
  // Without its .ptd the program loads; its method is refused, naming what is missing.
  auto without = client->load_program(kModels + "/mlp_ptd.pte");
  ASSERT_TRUE(without.ok()) << without.status().message();
  auto refused = (*without)->load_method("forward");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), etclient::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("fc1.weight"), std::string::npos)
      << refused.status().message();
}

TEST(ClientReconnect, WithReconnectOffARestartIsUnavailable) {
  DaemonProcess daemon;
  auto client = connect(daemon, std::chrono::milliseconds(0));
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/mlp.pte");
  ASSERT_TRUE(program.ok());
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  daemon.kill_and_restart();
  std::vector<int64_t> sizes;
  const auto x = npy_floats("mlp/forward.in0.npy", &sizes);
  for (int i = 0; i < 2; ++i) {
    auto out = (*method)->execute({HostTensor{x.data(), DType::kFloat32, sizes, {}}});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), StatusCode::kUnavailable) << out.status().message();
  }
}

TEST(ClientReconnect, NoDaemonBackWithinTheTimeoutIsUnavailable) {
  DaemonProcess daemon;
  auto client = connect(daemon, std::chrono::milliseconds(300), /*spawn=*/false);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/mlp.pte");
  ASSERT_TRUE(program.ok());
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  ASSERT_EQ(daemon.stop(), 0);
  std::vector<int64_t> sizes;
  const auto x = npy_floats("mlp/forward.in0.npy", &sizes);
  auto out = (*method)->execute({HostTensor{x.data(), DType::kFloat32, sizes, {}}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(out.status().message().find("et-serverd"), std::string::npos) << out.status().message();
}

TEST(ClientReconnect, ACallWaitsForADaemonThatComesBack) {
  DaemonProcess daemon;
  // As a client would by default, it may start a daemon when none answers past
  // kSupervisorGrace; the one it would start cannot be (a supervisor's restart then
  // finds its socket free, however long the restart takes on a busy machine).
  auto client = connect_unable_to_start(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/mlp.pte");
  ASSERT_TRUE(program.ok());
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  daemon.kill_now();
  std::thread supervisor([&] {  // restarts it a moment later, as systemd would
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    daemon.start();
  });
  std::vector<int64_t> sizes;
  const auto x = npy_floats("mlp/forward.in0.npy", &sizes);
  auto out = (*method)->execute({HostTensor{x.data(), DType::kFloat32, sizes, {}}});
  supervisor.join();
  EXPECT_EQ(out.status().code(), StatusCode::kAborted) << out.status().message();
  out = (*method)->execute({HostTensor{x.data(), DType::kFloat32, sizes, {}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_LT(max_diff((*out)[0], npy_floats("mlp/forward.out0.npy")), 1e-5);
}

// A daemon coming back as seen from outside while it starts: its socket bound but not
// listening (a connect is refused), then listening but not answering gRPC yet. Counts
// the connections it took that sent something (gRPC's attempts).
class LateListener {
 public:
  explicit LateListener(const std::string& path) : path_(path) {
    std::filesystem::remove(path);
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~LateListener() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    close(fd_);
    std::filesystem::remove(path_);
  }
  bool bound() const { return bound_; }
  int attempts() const { return attempts_; }
  // listen(), then take every connection: read what comes and hang up.
  void listen_without_answering() {
    ASSERT_EQ(listen(fd_, 16), 0);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 10) != 1) continue;
        const int conn = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (conn < 0) continue;
        pollfd c{conn, POLLIN, 0};
        char byte;
        if (poll(&c, 1, 1000) == 1 && recv(conn, &byte, 1, 0) == 1) ++attempts_;
        close(conn);
      }
    });
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<int> attempts_{0};
  std::thread thread_;
};

TEST(ClientReconnect, ACallWaitsForADaemonThatListensLate) {
  DaemonProcess daemon;
  // It may start a daemon and cannot (one it started would take the refusing socket
  // over): waiting past kSupervisorGrace, or a failed start, is "not yet" too.
  auto client = connect_unable_to_start(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/mlp.pte");
  ASSERT_TRUE(program.ok());
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  daemon.kill_now();
  std::thread supervisor([&] {
    {
      LateListener late(daemon.socket());
      ASSERT_TRUE(late.bound());
      // Refused for longer than a client that may start a daemon gives a supervisor
      // (1.5 s): "not yet" all the same.
      std::this_thread::sleep_for(std::chrono::seconds(3));
      late.listen_without_answering();
      // Listening and not answering: the client keeps trying rather than giving up.
      EXPECT_TRUE(eventually([&] { return late.attempts() >= 3; }));
    }  // the listener goes; the daemon comes back on the same socket
    daemon.start();
  });
  std::vector<int64_t> sizes;
  const auto x = npy_floats("mlp/forward.in0.npy", &sizes);
  auto out = (*method)->execute({HostTensor{x.data(), DType::kFloat32, sizes, {}}});
  supervisor.join();
  EXPECT_EQ(out.status().code(), StatusCode::kAborted) << out.status().message();
  out = (*method)->execute({HostTensor{x.data(), DType::kFloat32, sizes, {}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_LT(max_diff((*out)[0], npy_floats("mlp/forward.out0.npy")), 1e-5);
}

}  // namespace
}  // namespace et::testing
