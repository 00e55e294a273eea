// Clients and daemons of different protocol versions: the client names both versions
// at connect, and a client that starts daemons does not reuse one of another version;
// and what a starting client says when it finds no et-serverd to start.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "etclient/client.h"
#include "proto/protocol_version.h"
#include "tests/support/daemon.h"
#include "tests/support/eventually.h"

namespace et::testing {
namespace {

// A daemon of another release: the same service, another protocol version.
class OtherVersionDaemon final : public pb::EtServer::Service {
 public:
  grpc::Status OpenSession(grpc::ServerContext*,
                           grpc::ServerReaderWriter<pb::SessionServerMessage,
                                                    pb::SessionClientMessage>* stream) override {
    pb::SessionServerMessage welcome;
    welcome.set_session("00000000000000000000000000000000");
    welcome.set_server_version("9.9.9");
    welcome.set_protocol_version(et::wire::kProtocolVersion + 98);
    if (!stream->Write(welcome)) return grpc::Status::OK;
    pb::SessionClientMessage hello;
    while (stream->Read(&hello)) {
    }
    return grpc::Status::OK;
  }
};

struct OtherVersionServer {
  std::string dir, socket;
  OtherVersionDaemon service;
  std::unique_ptr<grpc::Server> server;

  OtherVersionServer() {
    char tmpl[] = "/tmp/et-version-XXXXXX";
    dir = mkdtemp(tmpl);
    socket = dir + "/s.sock";
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  ~OtherVersionServer() {
    server->Shutdown();
    std::filesystem::remove_all(dir);
  }
};

TEST(ClientVersion, ADaemonOfAnotherProtocolVersionIsNamedAtConnect) {
  OtherVersionServer other;
  ASSERT_TRUE(other.server);
  auto client = etclient::Client::connect({.socket = other.socket, .spawn = false});
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), etclient::StatusCode::kFailedPrecondition);
  const std::string m = client.status().message();
  EXPECT_NE(m.find("et-serverd 9.9.9"), std::string::npos) << m;
  EXPECT_NE(m.find("protocol version " + std::to_string(et::wire::kProtocolVersion + 98)),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("this client speaks version " + std::to_string(et::wire::kProtocolVersion)),
            std::string::npos)
      << m;
}

TEST(ClientVersion, AStartingClientDoesNotReuseADaemonOfAnotherVersion) {
  OtherVersionServer other;
  ASSERT_TRUE(other.server);
  const std::string own = other.socket + ".p" + std::to_string(et::wire::kProtocolVersion);
  {
    auto client = etclient::Client::connect({.socket = other.socket,
                                             .spawn = true,
                                             .serverd_path = serverd_path(),
                                             .idle_exit = std::chrono::seconds(1)});
    ASSERT_TRUE(client.ok()) << client.status().message();
    auto status = (*client)->server_status();
    ASSERT_TRUE(status.ok()) << status.status().message();
    EXPECT_EQ(status->protocol_version, et::wire::kProtocolVersion);
    EXPECT_EQ(status->idle_exit_seconds, 1u);
    struct stat st {};
    EXPECT_EQ(stat(own.c_str(), &st), 0) << "no daemon of this version at " << own;
  }
  // Idle, the daemon it started exits by itself and removes its socket.
  EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(own); }))
      << "the started daemon did not exit when idle";
}

// With no et-serverd to be found, the error says how to get one.
TEST(ClientAutostart, AMissingBinarySaysHowToGetOne) {
  char tmpl[] = "/tmp/et-autostart-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const char* path = std::getenv("PATH");
  const std::string saved_path = path != nullptr ? path : "";
  const char* bin = std::getenv("ETSERVER_BIN");
  const std::string saved_bin = bin != nullptr ? bin : "";
  setenv("PATH", dir.c_str(), 1);
  unsetenv("ETSERVER_BIN");
  auto client = etclient::Client::connect({.socket = dir + "/s.sock", .spawn = true});
  setenv("PATH", saved_path.c_str(), 1);
  if (bin != nullptr) setenv("ETSERVER_BIN", saved_bin.c_str(), 1);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), etclient::StatusCode::kUnavailable);
  const std::string m = client.status().message();
  EXPECT_NE(m.find("none was found to start"), std::string::npos) << m;
  EXPECT_NE(m.find("pip install etclient"), std::string::npos) << m;
  EXPECT_NE(m.find("ETSERVER_BIN"), std::string::npos) << m;
}

}  // namespace
}  // namespace et::testing
