#include "kernels/math/int4_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace et::kernels {
namespace {

struct Case {
  size_t m, n, k, group;
};

// Random int4 weights in XNNPACK's qbint4 layout, and their values.
struct Weights {
  std::vector<uint8_t> packed;
  std::vector<int> values;  // [n][k], -8 .. 7
  std::vector<float> scales;
};

Weights random_weights(const Case& c, std::mt19937& rng) {
  Weights w;
  w.packed.assign(c.n * c.k / 2, 0);
  w.values.resize(c.n * c.k);
  std::uniform_int_distribution<int> v(-8, 7);
  for (size_t i = 0; i < c.n * c.k; ++i) {
    w.values[i] = v(rng);
    const auto stored = static_cast<uint8_t>(w.values[i] + 8);
    w.packed[i / 2] |= i % 2 == 0 ? stored : static_cast<uint8_t>(stored << 4);
  }
  std::uniform_real_distribution<float> s(0.001f, 0.1f);
  for (size_t i = 0; i < c.n * (c.k / c.group); ++i) w.scales.push_back(s(rng));
  return w;
}

TEST(Int4Gemm, EveryPathMatchesTheDefinition) {
  std::mt19937 rng(7);
  for (const Case& c :
       {Case{1, 67, 64, 32}, Case{5, 130, 256, 64}, Case{3, 5, 48, 16}, Case{2, 3, 6, 6},
        Case{4, 200, 512, 128}, Case{1, 1, 32, 32}, Case{7, 65, 96, 32}, Case{9, 130, 64, 64},
        // Partial last chunks (k not a multiple of 128) and every grouping of the vector
        // paths: 32, 64, a multiple of 128, another multiple of 32.
        Case{2, 9, 160, 32}, Case{3, 7, 192, 64}, Case{1, 5, 320, 160}, Case{4, 6, 384, 96},
        Case{2, 5, 256, 256}, Case{1, 3, 1536, 1536}}) {
    SCOPED_TRACE(testing::Message() << c.m << "x" << c.n << "x" << c.k << " group " << c.group);
    ASSERT_TRUE(int4_gemm_fits(c.k, c.group));
    const Weights w = random_weights(c, rng);
    const Int4Weights packed = pack_int4_weights(w.packed.data(), c.n, c.k, c.group, w.scales);
    std::vector<int8_t> x(c.m * c.k);
    std::uniform_int_distribution<int> xv(-128, 127), zp(-128, 127);
    for (auto& v : x) v = static_cast<int8_t>(xv(rng));
    x[0] = -128;  // the extremes
    x[c.k - 1] = 127;
    std::vector<RowQuantization> rows(c.m);
    for (auto& r : rows) r = {0.02f + 0.001f * static_cast<float>(zp(rng) & 7), zp(rng)};
    std::vector<float> bias(c.n);
    for (size_t j = 0; j < c.n; ++j) bias[j] = 0.25f * static_cast<float>(j % 5) - 0.5f;

    std::vector<double> ref(c.m * c.n);
    for (size_t r = 0; r < c.m; ++r) {
      for (size_t j = 0; j < c.n; ++j) {
        double total = 0;
        for (size_t g = 0; g < c.k / c.group; ++g) {
          int64_t dot = 0;
          for (size_t i = g * c.group; i < (g + 1) * c.group; ++i) {
            dot += (x[r * c.k + i] - rows[r].zero_point) * w.values[j * c.k + i];
          }
          total += static_cast<double>(dot) * w.scales[j * (c.k / c.group) + g];
        }
        ref[r * c.n + j] = total * rows[r].scale + bias[j];
      }
    }
    // Every path this CPU runs, each against the definition.
    for (const auto& [name, fn] : detail::available_int4_rows()) {
      std::vector<float> y(c.m * c.n, NAN);
      detail::int4_gemm_with(fn, c.m, x.data(), rows, packed, bias.data(), y.data());
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y[i], ref[i], 1e-4 * std::abs(ref[i]) + 1e-4) << name << " element " << i;
      }
    }
    std::vector<float> y(c.m * c.n, NAN);
    int4_gemm(c.m, x.data(), rows, packed, bias.data(), y.data());
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_NEAR(y[i], ref[i], 1e-4 * std::abs(ref[i]) + 1e-4) << "element " << i;
    }
  }
}

TEST(Int4Gemm, RefusesShapesItCannotPack) {
  EXPECT_FALSE(int4_gemm_fits(7, 7));    // odd k
  EXPECT_FALSE(int4_gemm_fits(64, 48));  // group does not divide k
  EXPECT_FALSE(int4_gemm_fits(64, 0));
  EXPECT_TRUE(int4_gemm_fits(64, 64));
  // Groups whose integer sums could pass 32 bits.
  EXPECT_TRUE(int4_gemm_fits(kMaxInt4Group * 2, kMaxInt4Group));
  EXPECT_FALSE(int4_gemm_fits(kMaxInt4Group * 2, kMaxInt4Group * 2));
}

}  // namespace
}  // namespace et::kernels
