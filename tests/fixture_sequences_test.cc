// Several calls on ONE method instance, against eager outputs recorded call by call:
// mutable-buffer state carried across calls, and dynamic shapes growing and shrinking
// between calls. (et-run starts a fresh instance per call, so these live here.)
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/method.h"
#include "runtime/testing/fixtures.h"
#include "tools/npy.h"

namespace et {
namespace {

using testing::fixture;
using testing::fixture_path;

struct Sequence {
  const char* model;
  const char* method;
  int calls;
};

void PrintTo(const Sequence& s, std::ostream* os) { *os << s.model << "." << s.method; }

// export.py names files <model>/<method>.in0.npy for the first call and
// <model>/<method>.call<k>.in0.npy for call k.
std::string file(const Sequence& s, int call, const char* kind) {
  const std::string prefix = std::string(s.model) + "/" + s.method;
  return fixture_path(call == 0 ? prefix + "." + kind + "0.npy"
                                : prefix + ".call" + std::to_string(call) + "." + kind + "0.npy");
}

class Sequences : public ::testing::TestWithParam<Sequence> {};

TEST_P(Sequences, EachCallMatchesEager) {
  const Sequence& s = GetParam();
  auto program = fixture(std::string(s.model) + ".pte");
  ASSERT_NE(program, nullptr);
  auto method = Method::load(program, s.method);
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  for (int call = 0; call < s.calls; ++call) {
    auto input = tools::read_npy(file(s, call, "in"));
    auto expected = tools::read_npy(file(s, call, "out"));
    ASSERT_TRUE(input.ok() && expected.ok()) << input.status().to_string();
    TensorView view;
    view.data = input->data.data();
    view.nbytes = input->data.size();
    view.dtype = input->dtype;
    view.sizes = input->shape;
    ASSERT_TRUE((*method)->set_inputs({{InputValue::of_tensor(view)}}).ok());
    Status run = (*method)->execute();
    ASSERT_TRUE(run.ok()) << "call " << call << ": " << run.to_string();
    const Tensor& out = (*(*method)->output(0))->to_tensor();
    ASSERT_EQ(std::vector<int64_t>(out.sizes().begin(), out.sizes().end()), expected->shape)
        << "call " << call;
    const float* got = out.data_as<const float>();
    const auto* want = reinterpret_cast<const float*>(expected->data.data());
    for (int64_t i = 0; i < out.numel(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::abs(want[i]))
          << "call " << call << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Sequences,
                         ::testing::Values(Sequence{"mutable_buffer", "forward", 3},
                                           Sequence{"zoo_copy_", "float32", 2},
                                           Sequence{"dynamic_batch", "forward", 3}),
                         [](const auto& param_info) {
                           std::string name = param_info.param.model;
                           for (char& c : name) c = c == '_' ? 'X' : c;
                           return name;
                         });

}  // namespace
}  // namespace et
