// A method's attributes (the tensors a program names: mutable buffers exported with
// emit_mutable_buffer_names, weights kept in a .ptd) through libetclient and a real
// et-serverd, the daemon's registry of operators and backends, and profiles of several
// methods merged into one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "etclient/client.h"
#include "tests/support/client_testing.h"

namespace et::testing {
namespace {

std::shared_ptr<etclient::Client> connect(const DaemonProcess& daemon) {
  auto client =
      etclient::Client::connect({.socket = daemon.socket(), .client_name = "attributes_test"});
  EXPECT_TRUE(client.ok()) << client.status().message();
  return client.ok() ? *client : nullptr;
}

etclient::HostTensor host(const std::vector<float>& x, const std::vector<int64_t>& sizes) {
  return etclient::HostTensor{x.data(), etclient::DType::kFloat32, sizes, {}};
}

TEST(ClientAttributes, AMutableBufferReadsAsTheStateTheLastExecuteLeft) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kFixtures + "/mutable_buffer_named.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  const etclient::MethodMeta& meta = (*method)->meta();
  ASSERT_EQ(meta.attributes.size(), 1u);
  EXPECT_EQ(meta.attributes[0].name, "total");
  EXPECT_EQ(meta.attributes[0].tensor.dtype, etclient::DType::kFloat32);
  EXPECT_EQ(meta.attributes[0].tensor.sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(meta.attributes[0].tensor.memory_planned);

  std::vector<int64_t> sizes;
  const std::vector<float> x0 = npy_floats("mutable_buffer_named/forward.in0.npy", &sizes);
  const std::vector<float> x1 = npy_floats("mutable_buffer_named/forward.call1.in0.npy");
  ASSERT_TRUE((*method)->execute({host(x0, sizes)}).ok());
  auto out = (*method)->execute({host(x1, sizes)});
  ASSERT_TRUE(out.ok()) << out.status().message();
  auto total = (*method)->attribute("total");
  ASSERT_TRUE(total.ok()) << total.status().message();
  EXPECT_EQ(total->sizes(), (std::vector<int64_t>{2, 3}));
  // The buffer holds x0 + x1 (the exported initial state is zeros), as the output does.
  for (size_t i = 0; i < x0.size(); ++i) {
    EXPECT_NEAR(total->data_as<float>()[i], x0[i] + x1[i], 1e-6) << i;
  }
  EXPECT_LT(max_diff(*total, npy_floats("mutable_buffer_named/forward.call1.out0.npy")), 1e-6);
  // A copy: the next execute leaves it as it was.
  const float before = total->data_as<float>()[0];
  ASSERT_TRUE((*method)->execute({host(x1, sizes)}).ok());
  EXPECT_EQ(total->data_as<float>()[0], before);

  auto missing = (*method)->attribute("totals");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), etclient::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("it has: total"), std::string::npos)
      << missing.status().message();
}

TEST(ClientAttributes, AProgramWithoutNamedTensorsSaysHowToExportThem) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kFixtures + "/mutable_buffer.pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  EXPECT_TRUE((*method)->meta().attributes.empty());
  auto missing = (*method)->attribute("total");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("emit_mutable_buffer_names"), std::string::npos)
      << missing.status().message();
}

TEST(ClientAttributes, WeightsInADataFileAreNamedAttributes) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kFixtures + "/cnn_ptd.pte", kFixtures + "/cnn_ptd.ptd");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok());
  const auto& attributes = (*method)->meta().attributes;
  ASSERT_FALSE(attributes.empty());
  auto weight = (*method)->attribute(attributes[0].name);
  ASSERT_TRUE(weight.ok()) << weight.status().message();
  EXPECT_EQ(weight->sizes(), attributes[0].tensor.sizes);
  EXPECT_EQ(weight->nbytes(), attributes[0].tensor.nbytes);
}

TEST(ClientRegistry, ListsTheDaemonsOperatorsAndBackends) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto registry = client->registry();
  ASSERT_TRUE(registry.ok()) << registry.status().message();
  const auto& ops = registry->operators;
  EXPECT_GT(ops.size(), 200u);
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_NE(std::find(ops.begin(), ops.end(), "aten::add.out"), ops.end());
  EXPECT_NE(std::find(registry->backends.begin(), registry->backends.end(), "XnnpackBackend"),
            registry->backends.end());
  // The plain status call does not carry the lists.
  EXPECT_TRUE(client->server_status().ok());
}

TEST(ClientProfile, ProfilesOfSeveralMethodsMergeIntoOne) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kFixtures + "/multi_bundled.bpte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto a = (*program)->load_method((*program)->methods()[0].name);
  auto b = (*program)->load_method((*program)->methods()[1].name);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->start_profile().ok());
  ASSERT_TRUE((*b)->start_profile().ok());
  for (etclient::Method* m : {a->get(), b->get(), b->get()}) {
    std::vector<etclient::Input> inputs;
    std::vector<std::vector<float>> data;
    for (const auto& in : m->meta().inputs) {
      data.emplace_back(in.tensor->nbytes / 4, 1.0f);
      inputs.push_back(host(data.back(), in.tensor->sizes));
    }
    ASSERT_TRUE(m->execute(inputs).ok());
  }
  auto merged = (*a)->stop_profile({.etdump = true, .merge = {b->get()}});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->executes, 3u);
  EXPECT_FALSE(merged->etdump.empty());
  // Both profiles ended.
  EXPECT_EQ((*b)->stop_profile().status().code(), etclient::StatusCode::kFailedPrecondition);
  // A method that is not profiled is refused, and the other profile is kept.
  ASSERT_TRUE((*a)->start_profile().ok());
  auto refused = (*a)->stop_profile({.merge = {b->get()}});
  EXPECT_EQ(refused.status().code(), etclient::StatusCode::kFailedPrecondition);
  auto kept = (*a)->stop_profile();
  EXPECT_TRUE(kept.ok()) << kept.status().message();
}

}  // namespace
}  // namespace et::testing
