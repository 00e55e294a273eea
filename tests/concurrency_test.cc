// One Program shared by many threads, each with its own Method: results stay right.
// Run under TSan (scripts/build build-tsan -- -DET_SANITIZE=thread) to check races.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/core/program.h"
#include "runtime/testing/fixtures.h"
#include "tools/npy.h"

namespace et {
namespace {

std::string fixture_path(const std::string& rel) {
  return std::string(ET_FIXTURES_DIR) + "/" + rel;
}

TEST(Concurrency, MethodsOfOneProgramRunInParallel) {
  auto program = Program::load_file(fixture_path("mlp.pte"));
  ASSERT_TRUE(program.ok()) << program.status().to_string();
  auto input = tools::read_npy(fixture_path("mlp/forward.in0.npy"));
  auto expected = tools::read_npy(fixture_path("mlp/forward.out0.npy"));
  ASSERT_TRUE(input.ok() && expected.ok());

  constexpr int kThreads = 8;
  constexpr int kCalls = 50;
  std::vector<int> good(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto method = Method::load(*program, "forward");
      if (!method.ok()) return;
      TensorView view;
      view.data = input->data.data();
      view.nbytes = input->data.size();
      view.dtype = input->dtype;
      view.sizes = input->shape;
      view.writable = false;
      for (int i = 0; i < kCalls; ++i) {
        if (!(*method)->set_inputs({{InputValue::of_tensor(view)}}).ok()) return;
        if (!(*method)->execute().ok()) return;
        const Tensor& out = (*(*method)->output(0))->to_tensor();
        const float* got = out.data_as<const float>();
        const auto* want = reinterpret_cast<const float*>(expected->data.data());
        bool same = true;
        for (int64_t k = 0; k < out.numel(); ++k) same &= std::abs(got[k] - want[k]) < 1e-5f;
        good[t] += same;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(good[t], kCalls) << "thread " << t;
}

}  // namespace
}  // namespace et
