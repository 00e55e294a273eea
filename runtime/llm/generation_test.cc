#include "runtime/llm/generation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace et {
namespace {

TEST(TokenSampler, GreedyTakesTheFirstLargest) {
  TokenSampler s(0, 1, 0);
  const std::vector<float> logits{0.5f, 2, -1, 2, 1.5f};
  EXPECT_EQ(s.sample(logits), 1);
  const std::vector<float> with_nan{0.5f, NAN, 3};
  EXPECT_EQ(s.sample(with_nan), 1);  // torch.argmax treats NaN as the largest
}

TEST(TokenSampler, TheSameSeedGivesTheSameTokens) {
  const std::vector<float> logits{1, 1.2f, 0.8f, 1.1f, 0.9f, 1.05f};
  TokenSampler a(1, 1, 42), b(1, 1, 42), c(1, 1, 43);
  std::vector<int64_t> ta, tb, tc;
  for (int i = 0; i < 64; ++i) {
    ta.push_back(a.sample(logits));
    tb.push_back(b.sample(logits));
    tc.push_back(c.sample(logits));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
}

// Draws follow softmax(logits / T): with T = 1 and logits log(1), log(2), log(7), the
// tokens come in about 10%, 20% and 70% of 20000 draws; top_p 0.7 keeps only the last.
TEST(TokenSampler, DrawsFollowTheSoftmaxAndTopPCutsTheTail) {
  const std::vector<float> logits{std::log(1.0f), std::log(2.0f), std::log(7.0f)};
  TokenSampler s(1, 1, 7);
  std::map<int64_t, int> counts;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) ++counts[s.sample(logits)];
  EXPECT_NEAR(counts[0] / double{kDraws}, 0.1, 0.01);
  EXPECT_NEAR(counts[1] / double{kDraws}, 0.2, 0.015);
  EXPECT_NEAR(counts[2] / double{kDraws}, 0.7, 0.015);
  TokenSampler nucleus(1, 0.7f, 7);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(nucleus.sample(logits), 2);
  TokenSampler wider(1, 0.8f, 7);  // 0.7 is short of 0.8: the second token joins
  std::map<int64_t, int> two;
  for (int i = 0; i < 2000; ++i) ++two[wider.sample(logits)];
  EXPECT_EQ(two.count(0), 0u);
  EXPECT_GT(two[1], 0);
}

TEST(TokenSampler, HighTemperatureFlattens) {
  const std::vector<float> logits{0, 4};
  TokenSampler cold(0.25f, 1, 3), hot(100, 1, 3);
  int cold_zero = 0, hot_zero = 0;
  for (int i = 0; i < 4000; ++i) {
    cold_zero += cold.sample(logits) == 0;
    hot_zero += hot.sample(logits) == 0;
  }
  EXPECT_LT(cold_zero, 10);
  EXPECT_NEAR(hot_zero / 4000.0, 0.49, 0.03);
}

}  // namespace
}  // namespace et
