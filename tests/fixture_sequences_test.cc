// Several calls on ONE method instance, against eager outputs recorded call by call:
// mutable-buffer state carried across calls, and dynamic shapes growing and shrinking
// between calls. (et-run starts a fresh instance per call, so these live here.)
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/core/method.h"
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
  int inputs = 1;
  double tolerance = 1e-5;  // absolute and relative
  bool ptd = false;         // weights in <model>.ptd
};

void PrintTo(const Sequence& s, std::ostream* os) { *os << s.model << "." << s.method; }

// export.py names files <model>/<method>.in0.npy for the first call and
// <model>/<method>.call<k>.in0.npy for call k.
std::string file(const Sequence& s, int call, const char* kind, int index = 0) {
  const std::string prefix = std::string(s.model) + "/" + s.method;
  const std::string name = std::string(kind) + std::to_string(index) + ".npy";
  return fixture_path(call == 0 ? prefix + "." + name
                                : prefix + ".call" + std::to_string(call) + "." + name);
}

class Sequences : public ::testing::TestWithParam<Sequence> {};

TEST_P(Sequences, EachCallMatchesEager) {
  const Sequence& s = GetParam();
  auto program = fixture(std::string(s.model) + ".pte", s.ptd ? std::string(s.model) + ".ptd" : "");
  ASSERT_NE(program, nullptr);
  auto method = Method::load(program, s.method);
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  for (int call = 0; call < s.calls; ++call) {
    std::vector<tools::NpyArray> arrays;
    std::vector<InputValue> inputs;
    for (int i = 0; i < s.inputs; ++i) {
      auto input = tools::read_npy(file(s, call, "in", i));
      ASSERT_TRUE(input.ok()) << input.status().to_string();
      arrays.push_back(std::move(input).value());
    }
    for (tools::NpyArray& a : arrays) {
      TensorView view;
      view.data = a.data.data();
      view.nbytes = a.data.size();
      view.dtype = a.dtype;
      view.sizes = a.shape;
      inputs.push_back(InputValue::of_tensor(view));
    }
    auto expected = tools::read_npy(file(s, call, "out"));
    ASSERT_TRUE(expected.ok()) << expected.status().to_string();
    Status set = (*method)->set_inputs(inputs);
    ASSERT_TRUE(set.ok()) << "call " << call << ": " << set.to_string();
    Status run = (*method)->execute();
    ASSERT_TRUE(run.ok()) << "call " << call << ": " << run.to_string();
    const Tensor& out = (*(*method)->output(0))->to_tensor();
    ASSERT_EQ(std::vector<int64_t>(out.sizes().begin(), out.sizes().end()), expected->shape)
        << "call " << call;
    const float* got = out.data_as<const float>();
    const auto* want = reinterpret_cast<const float*>(expected->data.data());
    for (int64_t i = 0; i < out.numel(); ++i) {
      ASSERT_NEAR(got[i], want[i], s.tolerance + s.tolerance * std::abs(want[i]))
          << "call " << call << " element " << i;
    }
  }
}

// A batch of 0 is within a dynamic dim's bounds, but XNNPACK cannot run an empty
// tensor (its setup asserts, killing the daemon): the delegate refuses the call, and the
// method runs again afterwards. Found by the program fuzzer.
TEST(EmptyDynamicDims, TheDelegateRefusesThemAndStaysUsable) {
  for (const char* model : {"dynamic_batch_xnnpack", "cnn_dynamic_batch_xnnpack"}) {
    auto program = fixture(std::string(model) + ".pte");
    ASSERT_NE(program, nullptr);
    auto method = Method::load(program, "forward");
    ASSERT_TRUE(method.ok()) << method.status().to_string();
    auto input = tools::read_npy(fixture_path(std::string(model) + "/forward.in0.npy"));
    ASSERT_TRUE(input.ok());
    for (int64_t batch : {int64_t{0}, int64_t{1}}) {
      std::vector<int64_t> sizes = input->shape;
      sizes[0] = batch;
      TensorView view;
      view.data = input->data.data();
      view.nbytes = input->data.size();
      view.dtype = input->dtype;
      view.sizes = sizes;
      ASSERT_TRUE((*method)->set_input(0, InputValue::of_tensor(view)).ok()) << model;
      Status run = (*method)->execute();
      if (batch == 0) {
        ASSERT_FALSE(run.ok()) << model;
        EXPECT_NE(run.message().find("empty"), std::string::npos) << run.to_string();
      } else {
        EXPECT_TRUE(run.ok()) << model << ": " << run.to_string();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, Sequences,
    ::testing::Values(Sequence{"mutable_buffer", "forward", 3}, Sequence{"zoo_copy_", "float32", 2},
                      Sequence{"dynamic_batch", "forward", 3},
                      Sequence{"dynamic_batch_xnnpack", "forward", 3},
                      Sequence{"cnn_dynamic_batch_xnnpack", "forward", 3, 1, 1e-4},
                      // prefill, then 6 greedy decode steps
                      Sequence{"llama_decode", "forward", 7, 2, 1e-4},
                      Sequence{"llama_decode_xnnpack", "forward", 7, 2, 1e-4},
                      Sequence{"llama_decode_ptd", "forward", 7, 2, 1e-4, true},
                      // made by ExecuTorch's LLM export flow: prefill, 8 steps
                      Sequence{"llama_export_flow", "forward", 9, 2, 1e-4},
                      Sequence{"llama_export_flow_xnnpack", "forward", 9, 2, 1e-4}),
    [](const auto& param_info) {
      std::string name = param_info.param.model;
      for (char& c : name) c = c == '_' ? 'X' : c;
      return name;
    });

}  // namespace
}  // namespace et
