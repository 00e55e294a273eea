// The quantized_decomposed kernels no exported program reaches (add, mixed_mm and
// mixed_linear have no eager implementation, so export cannot trace a call to them),
// and llama::fallback (eager returns its input, so export drops it), each called in a
// one-instruction program. Expected values are ExecuTorch 1.5.1's
// own kernels' (torch.ops.quantized_decomposed.<op>.out in .venv-export, which runs
// them) on the same inputs, pasted; the calls are quoted at each test.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/testing/one_call.h"

namespace et {
namespace {

using testing::OneCall;
using testing::values_of;

// QD.add.out(a, 0.05, 128, 0, 255, b, 0.025, 100, 0, 255, 0.1, 120, 0, 255, out=out)
TEST(QuantizedOps, AddRequantizesTheSum) {
  OneCall p;
  const int a = p.constant<uint8_t>(ScalarType::kByte, {6}, {0, 17, 128, 255, 90, 3});
  const int b = p.constant<uint8_t>(ScalarType::kByte, {6}, {255, 40, 128, 0, 91, 200});
  const int out = p.planned(ScalarType::kByte, {6});
  auto d = [&](double v) { return p.b.add_double(v); };
  auto i = [&](int64_t v) { return p.b.add_int(v); };
  p.call("quantized_decomposed::add", "out",
         {a, d(0.05), i(128), i(0), i(255), b, d(0.025), i(100), i(0), i(255), d(0.1), i(120), i(0),
          i(255), out});
  p.b.set_outputs({out});
  auto m = p.load();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_TRUE((*m)->execute().ok());
  EXPECT_EQ(values_of<uint8_t>(**m, 0), (std::vector<uint8_t>{95, 50, 127, 158, 99, 82}));
}

// QD.mixed_mm.out(x [2, 3], w int8 [3, 4], s [3], None, out=o)
TEST(QuantizedOps, MixedMmScalesEachContractionRow) {
  OneCall p;
  const int x = p.constant<float>(ScalarType::kFloat, {2, 3}, {0.5f, -1.25f, 2, 3, 0.125f, -0.75f});
  const int w =
      p.constant<int8_t>(ScalarType::kChar, {3, 4}, {1, -2, 3, 127, -128, 5, 0, 7, 9, -10, 11, 12});
  const int s = p.constant<float>(ScalarType::kFloat, {3}, {0.5f, 0.25f, 0.125f});
  const int out = p.planned(ScalarType::kFloat, {2, 4});
  p.call("quantized_decomposed::mixed_mm", "out", {x, w, s, p.b.add_none(), out});
  p.b.set_outputs({out});
  auto m = p.load();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_TRUE((*m)->execute().ok());
  EXPECT_EQ(values_of<float>(**m, 0),
            (std::vector<float>{42.5f, -4.5625f, 3.5f, 32.5625f, -3.34375f, -1.90625f, 3.46875f,
                                189.59375f}));
}

// QD.mixed_linear.out(x [2, 5], w int8 [3, 5], s [3, 2] (groups of 3), None, out=o), and
// with s [3] (one scale a row).
TEST(QuantizedOps, MixedLinearScalesGroupsOfEachRow) {
  const std::vector<float> xs{0.5f, -1.25f, 2, 1.5f, -0.5f, 3, 0.125f, -0.75f, 0.25f, 2.5f};
  const std::vector<int8_t> ws{1, -2, 3, 127, 4, -128, 5, 0, 7, -1, 9, -10, 11, 12, 13};
  struct Case {
    std::vector<int32_t> scale_sizes;
    std::vector<float> scales, want;
  };
  for (const Case& c : {Case{{3, 2},
                             {0.5f, 0.25f, 0.125f, 2, 1, 0.75f},
                             {51.625f, 13.21875f, 47.625f, 10.6875f, -49.421875f, 44.125f}},
                        Case{{3},
                             {0.5f, 0.25f, 0.125f},
                             {98.75f, -14.8125f, 6.3125f, 21.125f, -96.03125f, 6.625f}}}) {
    OneCall p;
    const int x = p.constant<float>(ScalarType::kFloat, {2, 5}, xs);
    const int w = p.constant<int8_t>(ScalarType::kChar, {3, 5}, ws);
    const int s = p.constant<float>(ScalarType::kFloat, c.scale_sizes, c.scales);
    const int out = p.planned(ScalarType::kFloat, {2, 3});
    p.call("quantized_decomposed::mixed_linear", "out",
           {x, w, s, p.b.add_none(), p.b.add_none(), out});
    p.b.set_outputs({out});
    auto m = p.load();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    ASSERT_TRUE((*m)->execute().ok());
    EXPECT_EQ(values_of<float>(**m, 0), c.want);
  }
}

// llama::fallback.out copies its input (ExecuTorch's kernel: resize, then the bytes).
TEST(QuantizedOps, FallbackCopies) {
  OneCall p;
  const int x = p.constant<int32_t>(ScalarType::kInt, {2, 2}, {7, -1, 3, 1 << 30});
  const int out = p.planned(ScalarType::kInt, {2, 2});
  p.call("llama::fallback", "out", {x, out});
  p.b.set_outputs({out});
  auto m = p.load();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_TRUE((*m)->execute().ok());
  EXPECT_EQ(values_of<int32_t>(**m, 0), (std::vector<int32_t>{7, -1, 3, 1 << 30}));
  OneCall q;
  const int y = q.constant<int32_t>(ScalarType::kInt, {1}, {1});
  const int wrong = q.planned(ScalarType::kFloat, {1});
  q.call("llama::fallback", "out", {y, wrong});
  q.b.set_outputs({wrong});
  auto m2 = q.load();
  ASSERT_TRUE(m2.ok()) << m2.status().to_string();
  EXPECT_FALSE((*m2)->execute().ok());
}

// llama::update_cache.out(value [1, 2, 3, 4], cache [1, 5, 3, 4], 2, out=o) writes
// positions 2 and 3 of the cache, in every layout of the cache: dense (a position's
// heads copied at once), heads outermost (dim order 0, 2, 1, 3: each head's row), and
// head_dim not innermost (dim order 0, 1, 3, 2: element by element).
TEST(QuantizedOps, UpdateCacheWritesPositionsInEveryLayout) {
  std::vector<float> value(24);
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<float>(i + 1);
  for (const std::vector<uint8_t>& order :
       {std::vector<uint8_t>{}, std::vector<uint8_t>{0, 2, 1, 3},
        std::vector<uint8_t>{0, 1, 3, 2}}) {
    SCOPED_TRACE(order.size());
    OneCall p;
    const int v = p.constant<float>(ScalarType::kFloat, {1, 2, 3, 4}, value);
    const int cache = p.planned(ScalarType::kFloat, {1, 5, 3, 4}, order);
    const int out = p.planned(ScalarType::kFloat, {1});
    p.call("llama::update_cache", "out", {v, cache, p.b.add_int(2), out});
    p.b.set_outputs({cache});
    auto m = p.load();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    ASSERT_TRUE((*m)->execute().ok());
    const std::vector<float> after = values_of<float>(**m, 0);
    // Element [0, s, h, d] of the cache in memory, by its dim order.
    auto at = [&](int s, int h, int d) {
      if (order.empty()) return (s * 3 + h) * 4 + d;
      if (order[1] == 2) return (h * 5 + s) * 4 + d;
      return (s * 4 + d) * 3 + h;
    };
    for (int s = 2; s < 4; ++s)
      for (int h = 0; h < 3; ++h)
        for (int d = 0; d < 4; ++d) {
          ASSERT_EQ(after[at(s, h, d)], value[((s - 2) * 3 + h) * 4 + d])
              << s << " " << h << " " << d;
        }
  }
}

TEST(QuantizedOps, RefuseWhatExecuTorchRefuses) {
  {  // zero points on a mixed linear layer
    OneCall p;
    const int x = p.constant<float>(ScalarType::kFloat, {1, 2}, {1, 2});
    const int w = p.constant<int8_t>(ScalarType::kChar, {1, 2}, {1, 2});
    const int s = p.constant<float>(ScalarType::kFloat, {1}, {1});
    const int zp = p.constant<float>(ScalarType::kFloat, {1}, {0});
    const int out = p.planned(ScalarType::kFloat, {1, 1});
    p.call("quantized_decomposed::mixed_linear", "out", {x, w, s, zp, p.b.add_none(), out});
    p.b.set_outputs({out});
    auto m = p.load();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    const Status st = (*m)->execute();
    EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.to_string();
  }
  {  // an int8 add outside [0, 255]
    OneCall p;
    const int a = p.constant<int8_t>(ScalarType::kChar, {1}, {1});
    const int out = p.planned(ScalarType::kChar, {1});
    auto d = [&](double v) { return p.b.add_double(v); };
    auto i = [&](int64_t v) { return p.b.add_int(v); };
    p.call("quantized_decomposed::add", "out",
           {a, d(1), i(0), i(-128), i(127), a, d(1), i(0), i(-128), i(127), d(1), i(0), i(-128),
            i(127), out});
    p.b.set_outputs({out});
    auto m = p.load();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    const Status st = (*m)->execute();
    EXPECT_NE(st.message().find("[0, 255]"), std::string::npos) << st.to_string();
  }
}

}  // namespace
}  // namespace et
