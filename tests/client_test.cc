// libetclient against a real et-serverd: host and shared-memory inputs, fresh output
// slots per call, threads sharing one Client, and a clear error when no daemon runs.
#include "etclient/client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>

#include "client/cpp/src/wire.h"
#include "runtime/testing/program_builder.h"
#include "tests/support/client_testing.h"

namespace et::testing {
namespace {

const std::string& kModels = kFixtures;

std::shared_ptr<etclient::Client> connect(const DaemonProcess& daemon) {
  auto client =
      etclient::Client::connect({.socket = daemon.socket(), .client_name = "client_test"});
  EXPECT_TRUE(client.ok()) << client.status().message();
  return client.ok() ? *client : nullptr;
}

TEST(Client, RunsAProgramFromHostMemory) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/mlp.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  ASSERT_EQ((*program)->methods().size(), 1u);
  auto method = (*program)->load_method("forward");
  ASSERT_TRUE(method.ok()) << method.status().message();
  EXPECT_EQ((*method)->meta().inputs[0].tensor->dtype, etclient::DType::kFloat32);
  std::vector<int64_t> sizes;
  const std::vector<float> x = npy_floats("mlp/forward.in0.npy", &sizes);
  auto out =
      (*method)->execute({etclient::HostTensor{x.data(), etclient::DType::kFloat32, sizes, {}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_LT(max_diff((*out)[0], npy_floats("mlp/forward.out0.npy")), 1e-5);
  EXPECT_EQ((*out)[0].byte_strides().back(), 4);
}

TEST(Client, SharedInputsAndFreshOutputsPerCall) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/add_unplanned_io.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  std::vector<int64_t> sizes;
  const std::vector<float> a = npy_floats("add_unplanned_io/forward.in0.npy", &sizes);
  const std::vector<float> b = npy_floats("add_unplanned_io/forward.in1.npy");
  auto sa = client->empty(etclient::DType::kFloat32, sizes);
  auto sb = client->empty(etclient::DType::kFloat32, sizes);
  ASSERT_TRUE(sa.ok() && sb.ok());
  std::memcpy(sa->data(), a.data(), a.size() * 4);
  std::memcpy(sb->data(), b.data(), b.size() * 4);
  auto first = (*method)->execute({*sa, *sb});
  ASSERT_TRUE(first.ok()) << first.status().message();
  const std::vector<float> want = npy_floats("add_unplanned_io/forward.out0.npy");
  EXPECT_LT(max_diff((*first)[0], want), 1e-6);
  // A second call with other inputs writes new slots: the first result stays as it was.
  for (size_t i = 0; i < a.size(); ++i) sa->data_as<float>()[i] = 100.0f;
  auto second = (*method)->execute({*sa, *sb});
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_NE((*first)[0].data(), (*second)[0].data());
  EXPECT_LT(max_diff((*first)[0], want), 1e-6);
  EXPECT_FLOAT_EQ((*second)[0].data_as<float>()[0], 100.0f + b[0]);
}

TEST(Client, AnUnplannedSharedInputIsReadInPlace) {
  // Zero copy, shown: the daemon reads the client's bytes at execute time, so a change
  // made between set_inputs() and execute() is what the method sees.
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/add_unplanned_io.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  ASSERT_FALSE((*method)->meta().inputs[0].tensor->memory_planned);
  std::vector<int64_t> sizes;
  const std::vector<float> b = npy_floats("add_unplanned_io/forward.in1.npy", &sizes);
  auto sa = client->empty(etclient::DType::kFloat32, sizes);
  auto sb = client->empty(etclient::DType::kFloat32, sizes);
  ASSERT_TRUE(sa.ok() && sb.ok());
  std::memcpy(sb->data(), b.data(), b.size() * 4);
  for (size_t i = 0; i < b.size(); ++i) sa->data_as<float>()[i] = 1.0f;
  ASSERT_TRUE((*method)->set_inputs({*sa, *sb}).ok());
  for (size_t i = 0; i < b.size(); ++i) sa->data_as<float>()[i] = 7.0f;  // after set
  ASSERT_TRUE((*method)->execute().ok());
  auto out = (*method)->outputs();
  ASSERT_TRUE(out.ok()) << out.status().message();
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_FLOAT_EQ((*out)[0].data_as<float>()[i], 7.0f + b[i]) << "element " << i;
  }
}

TEST(Client, ThreadsShareOneClientWithAMethodEach) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/cnn_xnnpack.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  std::vector<int64_t> sizes;
  const std::vector<float> x = npy_floats("cnn_xnnpack/forward.in0.npy", &sizes);
  const std::vector<float> want = npy_floats("cnn_xnnpack/forward.out0.npy");
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      auto method = (*program)->load_method();
      if (!method.ok()) {
        ++wrong;
        return;
      }
      for (int i = 0; i < 20; ++i) {
        auto out = (*method)->execute(
            {etclient::HostTensor{x.data(), etclient::DType::kFloat32, sizes, {}}});
        if (!out.ok() || max_diff((*out)[0], want) > 1e-5) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Client, AResultOutlivesItsClient) {
  DaemonProcess daemon;
  etclient::SharedTensor kept;
  {
    auto client = connect(daemon);
    ASSERT_TRUE(client);
    auto program = client->load_program(kModels + "/mlp.pte");
    ASSERT_TRUE(program.ok());
    auto method = (*program)->load_method();
    ASSERT_TRUE(method.ok());
    std::vector<int64_t> sizes;
    const std::vector<float> x = npy_floats("mlp/forward.in0.npy", &sizes);
    auto out =
        (*method)->execute({etclient::HostTensor{x.data(), etclient::DType::kFloat32, sizes, {}}});
    ASSERT_TRUE(out.ok());
    kept = (*out)[0];
  }  // client, program and method are gone; the result's memory stays mapped
  EXPECT_LT(max_diff(kept, npy_floats("mlp/forward.out0.npy")), 1e-5);
}

// Method::set_timeout: the daemon stops a call at its timeout (a program that never
// ends by itself, under the daemon's own bounds of ten minutes and 10^15 instructions), the method
// stays usable, and calls without one are as before. --vet off: the endless program is loaded, not
// tried in a sandbox first.
TEST(Client, ATimeoutStopsTheCallInTheDaemonAndTheMethodStaysUsable) {
  DaemonProcess daemon({"--vet", "off", "--execution-deadline-ms", "600000", "--max-instructions",
                        "1000000000000000"});
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  const std::vector<uint8_t> bytes = endless_program().finish();
  const std::string path = ::testing::TempDir() + "/endless_client_test.pte";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  auto program = client->load_program(path);
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  const bool fast = std::string((*method)->transport()) == "fast";
  for (int call = 0; call < 2; ++call) {
    (*method)->set_timeout(std::chrono::milliseconds(100));
    auto out = (*method)->execute({});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), etclient::StatusCode::kDeadlineExceeded)
        << out.status().message();
    // The fast path's client waits for the daemon's answer: the daemon's words.
    if (fast) {
      EXPECT_NE(out.status().message().find("the call's deadline passed"), std::string::npos)
          << out.status().message();
      EXPECT_STREQ((*method)->transport(), "fast");  // the channel was not given up
    }
  }
}

TEST(Client, NoDaemonIsAClearError) {
  auto client =
      etclient::Client::connect({.socket = "/tmp/et-serverd-nobody-here.sock", .spawn = false});
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), etclient::StatusCode::kUnavailable);
  EXPECT_NE(client.status().message().find("is the daemon running"), std::string::npos)
      << client.status().message();
}

TEST(Client, DaemonErrorsArriveAsValues) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/mlp.pte");
  ASSERT_TRUE(program.ok());
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  const std::vector<double> wrong(64, 1.0);
  auto out = (*method)->execute(
      {etclient::HostTensor{wrong.data(), etclient::DType::kFloat64, {4, 16}, {}}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), etclient::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("input 0"), std::string::npos) << out.status().message();
  auto missing = (*program)->load_method("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), etclient::StatusCode::kNotFound);
}

TEST(Client, StridedHostTensorsAreGatheredInOrder) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/add.pte");
  ASSERT_TRUE(program.ok());
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  std::vector<int64_t> sizes;
  const std::vector<float> a = npy_floats("add/forward.in0.npy", &sizes);
  const std::vector<float> b = npy_floats("add/forward.in1.npy");
  const int64_t rows = sizes[0], cols = sizes[1];
  // a, stored transposed (column-major): strides {1, rows}.
  std::vector<float> a_t(a.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) a_t[c * rows + r] = a[r * cols + c];
  // b, stored upside down and read from its last row: strides {-cols, 1}.
  std::vector<float> b_flipped(b.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) b_flipped[(rows - 1 - r) * cols + c] = b[r * cols + c];
  auto out = (*method)->execute({
      etclient::HostTensor{a_t.data(), etclient::DType::kFloat32, sizes, {1, rows}},
      etclient::HostTensor{
          b_flipped.data() + (rows - 1) * cols, etclient::DType::kFloat32, sizes, {-cols, 1}},
  });
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_LT(max_diff((*out)[0], npy_floats("add/forward.out0.npy")), 1e-6);
}

TEST(Client, MalformedHostTensorsAreRefusedNamingTheInput) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/add.pte");
  ASSERT_TRUE(program.ok());
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  const std::vector<float> x(6, 1.0f);
  const etclient::HostTensor good{x.data(), etclient::DType::kFloat32, {2, 3}, {}};
  const std::vector<std::pair<etclient::HostTensor, std::string>> cases = {
      {{x.data(), etclient::DType::kFloat32, {2, 3}, {1}}, "strides"},
      {{x.data(), etclient::DType::kFloat32, {2, -3}, {}}, "negative size"},
      {{nullptr, etclient::DType::kFloat32, {2, 3}, {}}, "null"},
      {{x.data(), etclient::DType::kFloat32, {1 << 30, 1 << 30}, {}}, "more elements"},
      {{x.data(), etclient::DType::kFloat32, {0, int64_t{1} << 40}, {}}, "dimension 1"},
      {{x.data(), etclient::DType::kFloat32, std::vector<int64_t>(17, 1), {}}, "17 dimensions"},
  };
  for (const auto& [bad, what] : cases) {
    auto out = (*method)->execute({good, bad});
    ASSERT_FALSE(out.ok()) << what;
    EXPECT_EQ(out.status().code(), etclient::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("input 1:"), std::string::npos) << out.status().message();
    EXPECT_NE(out.status().message().find(what), std::string::npos) << out.status().message();
  }
  EXPECT_TRUE((*method)->execute({good, good}).ok());  // nothing was left half-set
}

}  // namespace
// L6 of the security review: a reply (from a daemon, or something posing as one) that
// describes more bytes than the output's slot holds must not become a view.
TEST(Client, RepliesAreCheckedAgainstTheirSlot) {
  etclient::Slot slot;
  slot.offset = 64;
  slot.size = 16;
  etserver::v1::Tensor t;
  t.set_dtype(etserver::v1::FLOAT32);
  t.add_sizes(4);
  t.mutable_segment()->set_offset(64);
  t.mutable_segment()->set_length(16);
  EXPECT_TRUE(etclient::check_output_reply(0, t, slot).ok());
  t.set_sizes(0, 5);  // 20 bytes
  etclient::Status s = etclient::check_output_reply(0, t, slot);
  EXPECT_EQ(s.code(), etclient::StatusCode::kInternal);
  EXPECT_NE(s.message().find("outside the 16-byte slot"), std::string::npos) << s.message();
  t.set_sizes(0, 4);
  t.mutable_segment()->set_offset(0);
  EXPECT_FALSE(etclient::check_output_reply(0, t, slot).ok());
  t.mutable_segment()->set_offset(64);
  t.set_sizes(0, -1);
  EXPECT_FALSE(etclient::check_output_reply(0, t, slot).ok());
  t.set_sizes(0, 4);
  t.set_dtype(static_cast<etserver::v1::DataType>(99));
  EXPECT_FALSE(etclient::check_output_reply(0, t, slot).ok());
}

namespace {

TEST(Client, StagingBeforeACallReusesOneBufferPerInput) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kModels + "/mlp.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  std::vector<int64_t> sizes;
  const std::vector<float> x = npy_floats("mlp/forward.in0.npy", &sizes);
  const std::vector<float> zeros(x.size(), 0.0f);
  auto first = (*method)->stage_scratch(0, {zeros.data(), etclient::DType::kFloat32, sizes, {}});
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = (*method)->stage_scratch(0, {x.data(), etclient::DType::kFloat32, sizes, {}});
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(first->data(), second->data());  // the same buffer, rewritten
  EXPECT_EQ(std::memcmp(second->data(), x.data(), x.size() * 4), 0);
  auto out = (*method)->execute({*second});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_LT(max_diff((*out)[0], npy_floats("mlp/forward.out0.npy")), 1e-5);
  // stage_input() gives a fresh buffer each time.
  auto a = (*method)->stage_input(0, {x.data(), etclient::DType::kFloat32, sizes, {}});
  auto b = (*method)->stage_input(0, {x.data(), etclient::DType::kFloat32, sizes, {}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->data(), b->data());
}

}  // namespace
}  // namespace et::testing
