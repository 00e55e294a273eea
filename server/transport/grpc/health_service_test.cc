#include "server/transport/grpc/health_service.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/eventually.h"

namespace et::server {
namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// A gRPC server with only the health service on a Unix socket, and a client. (Not the
// in-process channel: there a write completes only once the peer reads it, where a
// socket's completes once the bytes are on their way, as for the daemon's clients.)
class HealthServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/et-health-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    const std::string address = "unix:" + dir_ + "/s.sock";
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials());
    builder.RegisterService(&health_);
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_);
    stub_ = Health::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
    std::filesystem::remove_all(dir_);
  }

  static std::chrono::steady_clock::time_point backstop() {
    return std::chrono::steady_clock::now() + et::testing::kBackstop;
  }

  // A call's context, with the backstop as its deadline: a stream that never ends fails
  // the test instead of hanging it.
  static void bound(grpc::ClientContext& context) {
    context.set_deadline(std::chrono::system_clock::now() + et::testing::kBackstop);
  }

  // Watches `service` (bounded by the backstop) and reads its first update into `first`.
  std::unique_ptr<grpc::ClientReader<HealthCheckResponse>> watch(grpc::ClientContext& context,
                                                                 const std::string& service,
                                                                 HealthCheckResponse& first) {
    bound(context);
    HealthCheckRequest request;
    request.set_service(service);
    auto stream = stub_->Watch(&context, request);
    EXPECT_TRUE(stream->Read(&first));
    return stream;
  }

  grpc::Status check(const std::string& service, HealthCheckResponse* out) {
    grpc::ClientContext context;
    bound(context);
    HealthCheckRequest request;
    request.set_service(service);
    return stub_->Check(&context, request, out);
  }

  std::string dir_;
  HealthService health_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Health::Stub> stub_;
};

TEST_F(HealthServiceTest, CheckAnswersTheStatusAndNotFoundForAnotherService) {
  HealthCheckResponse out;
  ASSERT_TRUE(check("", &out).ok());
  EXPECT_EQ(out.status(), HealthCheckResponse::NOT_SERVING);
  health_.set_serving(true);
  ASSERT_TRUE(check("", &out).ok());
  EXPECT_EQ(out.status(), HealthCheckResponse::SERVING);
  EXPECT_EQ(check("etserver.v1.EtServer", &out).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(HealthServiceTest, AWatcherSeesEachChangeThenNotServingAndTheStreamsEnd) {
  grpc::ClientContext context;
  HealthCheckResponse update;
  auto stream = watch(context, "", update);
  EXPECT_EQ(update.status(), HealthCheckResponse::NOT_SERVING);
  health_.set_serving(true);
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::SERVING);

  health_.stop();
  // The stream has ended on the server's side before the server is shut down, with no
  // grace: what the watcher reads below was sent before the shutdown, not raced by it.
  ASSERT_TRUE(health_.wait_for_watchers(backstop()));
  EXPECT_EQ(health_.watchers(), 0u);
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();

  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(stream->Read(&update));
  const grpc::Status end = stream->Finish();
  EXPECT_EQ(end.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(end.error_message(), "et-serverd is stopping");
}

TEST_F(HealthServiceTest, NothingChangesTheStatusAfterStop) {
  health_.set_serving(true);
  health_.stop();
  health_.set_serving(true);
  HealthCheckResponse out;
  ASSERT_TRUE(check("", &out).ok());
  EXPECT_EQ(out.status(), HealthCheckResponse::NOT_SERVING);
}

TEST_F(HealthServiceTest, AWatchAfterStopIsToldAndEnded) {
  health_.set_serving(true);
  health_.stop();
  grpc::ClientContext context;
  HealthCheckResponse update;
  auto stream = watch(context, "", update);
  EXPECT_EQ(update.status(), HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(stream->Read(&update));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(health_.wait_for_watchers(backstop()));
}

TEST_F(HealthServiceTest, AnotherServiceIsWatchedAsUnknownUntilStop) {
  grpc::ClientContext context;
  HealthCheckResponse update;
  auto stream = watch(context, "etserver.v1.EtServer", update);
  EXPECT_EQ(update.status(), HealthCheckResponse::SERVICE_UNKNOWN);
  health_.set_serving(true);  // not its service: nothing new to send
  health_.stop();
  EXPECT_FALSE(stream->Read(&update));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(HealthServiceTest, AWatcherThatLeavesIsForgotten) {
  {
    grpc::ClientContext context;
    HealthCheckResponse update;
    auto stream = watch(context, "", update);
    EXPECT_EQ(health_.watchers(), 1u);
    context.TryCancel();
    EXPECT_FALSE(stream->Read(&update));
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  EXPECT_TRUE(et::testing::eventually([&] { return health_.watchers() == 0; }));
  health_.set_serving(true);  // nobody left to write to
  health_.stop();
  EXPECT_TRUE(health_.wait_for_watchers(backstop()));
}

}  // namespace
}  // namespace et::server
