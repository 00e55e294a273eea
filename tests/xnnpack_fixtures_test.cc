// The XNNPACK-delegated fixtures through the runtime and XnnpackBackend: outputs match
// eager PyTorch, and every instance of a program shares one compiled graph.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/core/program.h"
#include "tools/npy.h"

namespace et {
namespace {

const std::string kDir = ET_FIXTURES_DIR;

struct Io {
  tools::NpyArray input, expected;
};

Io load_io(const std::string& model) {
  auto in = tools::read_npy(kDir + "/" + model + "/forward.in0.npy");
  auto out = tools::read_npy(kDir + "/" + model + "/forward.out0.npy");
  EXPECT_TRUE(in.ok() && out.ok()) << model;
  return {std::move(in).value(), std::move(out).value()};
}

InputValue as_input(const tools::NpyArray& a) {
  TensorView view;
  view.data = const_cast<uint8_t*>(a.data.data());
  view.nbytes = a.data.size();
  view.dtype = a.dtype;
  view.sizes = a.shape;
  return InputValue::of_tensor(view);
}

// Largest |actual - expected| over the first output.
double max_error(Method& m, const tools::NpyArray& expected) {
  auto out = m.output(0);
  EXPECT_TRUE(out.ok());
  const Tensor& t = (*out)->to_tensor();
  EXPECT_EQ(static_cast<size_t>(t.nbytes()), expected.data.size());
  const auto* a = t.data_as<float>();
  const auto* e = reinterpret_cast<const float*>(expected.data.data());
  double worst = 0;
  for (int64_t i = 0; i < t.numel(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - e[i]));
  return worst;
}

class DelegatedFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(DelegatedFixture, MatchesEager) {
  const std::string model = GetParam();
  auto program = Program::load_file(kDir + "/" + model + ".pte");
  ASSERT_TRUE(program.ok()) << program.status().to_string();
  auto method = Method::load(*program, "forward");
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  Io io = load_io(model);
  for (int call = 0; call < 2; ++call) {  // the second call reuses the bound runtime
    ASSERT_TRUE((*method)->set_input(0, as_input(io.input)).ok());
    Status s = (*method)->execute();
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_LT(max_error(**method, io.expected), 1e-4) << model << " call " << call;
  }
}

INSTANTIATE_TEST_SUITE_P(Xnnpack, DelegatedFixture,
                         ::testing::Values("mlp_xnnpack", "cnn_xnnpack", "mobilenet_v2_xnnpack",
                                           "transformer_block_xnnpack"));

TEST(DelegatedFixture, FiftyInstancesShareOneCompiledGraph) {
  auto program = Program::load_file(kDir + "/cnn_xnnpack.pte");
  ASSERT_TRUE(program.ok()) << program.status().to_string();
  Io io = load_io("cnn_xnnpack");
  std::vector<std::unique_ptr<Method>> instances;
  for (int i = 0; i < 50; ++i) {
    auto m = Method::load(*program, "forward");
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    instances.push_back(std::move(m).value());
  }
  // One delegate payload in the program: one cache entry, however many instances.
  EXPECT_EQ((*program)->backend_cache().size(), 1u);
  for (auto& m : instances) {
    ASSERT_TRUE(m->set_input(0, as_input(io.input)).ok());
    ASSERT_TRUE(m->execute().ok());
    EXPECT_LT(max_error(*m, io.expected), 1e-4);
  }
}

TEST(DelegatedFixture, AWrongInputShapeIsRefusedNotRun) {
  auto program = Program::load_file(kDir + "/mlp_xnnpack.pte");
  ASSERT_TRUE(program.ok());
  auto method = Method::load(*program, "forward");
  ASSERT_TRUE(method.ok());
  Io io = load_io("mlp_xnnpack");
  io.input.shape = {2, io.input.shape[1]};  // half the rows
  io.input.data.resize(io.input.data.size() / 2);
  Status s = (*method)->set_input(0, as_input(io.input));
  if (s.ok()) s = (*method)->execute();
  ASSERT_FALSE(s.ok());
}

}  // namespace
}  // namespace et
