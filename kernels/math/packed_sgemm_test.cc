// packed_sgemm on every ISA this CPU has, against a double-precision product: row counts
// around every register tile height and its balanced row tiles, columns around the panel
// width, depths around the depth block, both weight layouts, with and without a bias, rows
// wider than the matrices (whose padding must stay untouched), rows in several chunks,
// and the same bits whatever the thread split.
#include "kernels/math/packed_sgemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "runtime/core/thread_pool.h"

namespace et::kernels {
namespace {

constexpr float kGuard = -12345.0f;

struct Linear {
  int64_t m, n, k;
  bool k_by_n;
  static constexpr int64_t kPad = 3;  // extra elements per row of x and y
  std::vector<float> x, w, bias;

  Linear(int64_t m_, int64_t n_, int64_t k_, bool k_by_n_, uint32_t seed)
      : m(m_), n(n_), k(k_), k_by_n(k_by_n_) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    x.resize(static_cast<size_t>(m * ldx()));
    w.resize(static_cast<size_t>(n * k));
    bias.resize(static_cast<size_t>(n));
    for (float& v : x) v = value(rng);
    for (float& v : w) v = value(rng);
    for (float& v : bias) v = value(rng);
  }
  int64_t ldx() const { return k + kPad; }
  int64_t ldy() const { return n + kPad; }
  float w_at(int64_t j, int64_t p) const {
    return w[static_cast<size_t>(k_by_n ? p * n + j : j * k + p)];
  }
  std::vector<float> run(const PackedWeights& packed, bool with_bias) const {
    std::vector<float> y(static_cast<size_t>(m * ldy() + 1), kGuard);
    packed_sgemm(m, x.data(), ldx(), packed, with_bias ? bias.data() : nullptr, y.data(), ldy());
    return y;
  }
};

void expect_product(const Linear& l, const std::vector<float>& y, bool with_bias, const char* isa) {
  for (int64_t i = 0; i < l.m; ++i) {
    for (int64_t j = 0; j < l.ldy(); ++j) {
      const float got = y[static_cast<size_t>(i * l.ldy() + j)];
      if (j >= l.n) {
        ASSERT_EQ(got, kGuard) << isa << ": wrote past column " << l.n << " of row " << i;
        continue;
      }
      double want = with_bias ? l.bias[static_cast<size_t>(j)] : 0.0, scale = std::abs(want);
      for (int64_t p = 0; p < l.k; ++p) {
        const double term = double(l.x[static_cast<size_t>(i * l.ldx() + p)]) * l.w_at(j, p);
        want += term;
        scale += std::abs(term);
      }
      ASSERT_NEAR(got, want, 1e-6 * scale + 1e-7)
          << isa << " m=" << l.m << " n=" << l.n << " k=" << l.k << " at (" << i << ", " << j
          << ") k_by_n=" << l.k_by_n << " bias=" << with_bias;
    }
  }
  EXPECT_EQ(y.back(), kGuard) << isa << ": wrote past the last row";
}

TEST(PackedSgemm, EveryIsaMatchesADoublePrecisionProduct) {
  const int64_t shapes[][3] = {{1, 1, 1},     {1, 33, 600},  {2, 32, 256},  {3, 70, 257},
                               {4, 5, 7},     {5, 16, 16},   {6, 17, 255},  {7, 31, 9},
                               {8, 64, 64},   {9, 65, 130},  {13, 47, 513}, {17, 100, 40},
                               {34, 96, 512}, {97, 129, 65}, {130, 40, 5}};
  uint32_t seed = 1;
  for (CpuIsa isa : available_isas()) {
    for (const auto& s : shapes) {
      for (bool k_by_n : {false, true}) {
        const Linear l(s[0], s[1], s[2], k_by_n, seed++);
        const PackedWeights packed = pack_weights(l.w.data(), l.n, l.k, k_by_n, isa);
        ASSERT_EQ(packed.isa, isa);
        ASSERT_EQ(packed.bytes() % (packed.panel_width * sizeof(float)), 0u);
        for (bool with_bias : {false, true}) {
          expect_product(l, l.run(packed, with_bias), with_bias, isa_name(isa));
        }
      }
    }
  }
}

// More rows than one chunk (192), the last chunk partial.
TEST(PackedSgemm, RowsInSeveralChunks) {
  const Linear l(600, 40, 300, false, 5);
  const PackedWeights packed = pack_weights(l.w.data(), l.n, l.k, false);
  expect_product(l, l.run(packed, true), true, isa_name(packed.isa));
}

TEST(PackedSgemm, NoRowsWritesNothing) {
  const Linear l(0, 40, 20, false, 6);
  const PackedWeights packed = pack_weights(l.w.data(), l.n, l.k, false);
  std::vector<float> y(8, kGuard);
  packed_sgemm(0, l.x.data(), l.ldx(), packed, l.bias.data(), y.data(), l.ldy());
  EXPECT_EQ(y, std::vector<float>(8, kGuard));
}

// Each element is summed the same way whichever thread computes its panel.
TEST(PackedSgemm, ThreadSplitsGiveTheSameBits) {
  const size_t threads_before = ThreadPool::global().threads();
  for (int64_t m : {1, 3, 34, 300}) {
    const Linear l(m, 700, 300, false, 11);
    const PackedWeights packed = pack_weights(l.w.data(), l.n, l.k, false);
    ThreadPool::global().set_threads(1);
    const std::vector<float> alone = l.run(packed, true);
    ThreadPool::global().set_threads(3);
    EXPECT_EQ(alone, l.run(packed, true)) << "m=" << m;
  }
  ThreadPool::global().set_threads(threads_before);
}

}  // namespace
}  // namespace et::kernels
