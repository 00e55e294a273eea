// sgemm on every ISA this CPU has, against a double-precision product: shapes around
// every ISA's register tile and cache blocks, both layouts of B, accumulation, leading
// dimensions wider than the matrices (whose padding must stay untouched), and the
// determinism sgemm.h promises (same bits whatever the thread split).
#include "kernels/math/sgemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "runtime/core/thread_pool.h"

namespace et::kernels {
namespace {

constexpr float kGuard = -12345.0f;

struct Problem {
  int64_t m, n, k;
  bool b_transposed = false;
  bool accumulate = false;
  int64_t pad = 3;  // extra elements per row of A, B and C
  std::vector<float> a, b, c;

  Problem(int64_t m_, int64_t n_, int64_t k_, bool transposed, bool acc, uint32_t seed)
      : m(m_), n(n_), k(k_), b_transposed(transposed), accumulate(acc) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    a.resize(static_cast<size_t>(m * lda() + 1));
    b.resize(static_cast<size_t>((transposed ? n : k) * ldb() + 1));
    c.assign(static_cast<size_t>(m * ldc() + 1), kGuard);
    for (float& v : a) v = value(rng);
    for (float& v : b) v = value(rng);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i * ldc() + j)] = value(rng);
    }
  }
  int64_t lda() const { return k + pad; }
  int64_t ldb() const { return (b_transposed ? k : n) + pad; }
  int64_t ldc() const { return n + pad; }
  float b_at(int64_t p, int64_t j) const {
    return b[static_cast<size_t>(b_transposed ? j * ldb() + p : p * ldb() + j)];
  }
  SgemmArgs args(std::vector<float>& out) const {
    return {m, n, k, a.data(), lda(), b.data(), ldb(), b_transposed, out.data(), ldc(), accumulate};
  }
};

void expect_product(const Problem& pr, const std::vector<float>& got, const char* isa) {
  for (int64_t i = 0; i < pr.m; ++i) {
    for (int64_t j = 0; j < pr.ldc(); ++j) {
      const float value = got[static_cast<size_t>(i * pr.ldc() + j)];
      const float before = pr.c[static_cast<size_t>(i * pr.ldc() + j)];
      if (j >= pr.n) {
        ASSERT_EQ(value, kGuard) << isa << ": wrote past column " << pr.n << " of row " << i;
        continue;
      }
      double want = pr.accumulate ? before : 0.0, scale = std::abs(want);
      for (int64_t p = 0; p < pr.k; ++p) {
        const double term = double(pr.a[static_cast<size_t>(i * pr.lda() + p)]) * pr.b_at(p, j);
        want += term;
        scale += std::abs(term);
      }
      ASSERT_NEAR(value, want, 1e-6 * scale + 1e-7)
          << isa << " m=" << pr.m << " n=" << pr.n << " k=" << pr.k << " at (" << i << ", " << j
          << ") transposed=" << pr.b_transposed << " accumulate=" << pr.accumulate;
    }
  }
}

TEST(Sgemm, EveryIsaMatchesADoublePrecisionProduct) {
  const int64_t shapes[][3] = {{1, 1, 1},     {1, 37, 19},  {3, 70, 300},  {4, 5, 7},
                               {5, 16, 16},   {6, 16, 1},   {7, 33, 9},    {8, 32, 256},
                               {13, 47, 257}, {25, 64, 64}, {97, 129, 65}, {130, 2100, 5},
                               {200, 7, 520}};
  uint32_t seed = 1;
  for (CpuIsa isa : available_isas()) {
    for (const auto& s : shapes) {
      for (bool transposed : {false, true}) {
        for (bool accumulate : {false, true}) {
          const Problem pr(s[0], s[1], s[2], transposed, accumulate, seed++);
          std::vector<float> out = pr.c;
          sgemm_on(isa, pr.args(out));
          expect_product(pr, out, isa_name(isa));
        }
      }
    }
  }
}

TEST(Sgemm, EmptyDepthGivesZerosOrLeavesCAlone) {
  for (CpuIsa isa : available_isas()) {
    for (bool accumulate : {false, true}) {
      const Problem pr(9, 40, 0, false, accumulate, 7);
      std::vector<float> out = pr.c;
      sgemm_on(isa, pr.args(out));
      for (int64_t i = 0; i < pr.m; ++i) {
        for (int64_t j = 0; j < pr.n; ++j) {
          const auto at = static_cast<size_t>(i * pr.ldc() + j);
          EXPECT_EQ(out[at], accumulate ? pr.c[at] : 0.0f) << isa_name(isa);
        }
      }
    }
  }
}

// Every row and column is computed the same way wherever a thread's share begins, so a
// product split across threads, or computed in pieces, gives the bits of one call.
TEST(Sgemm, ThreadSplitsGiveTheSameBits) {
  const size_t threads_before = ThreadPool::global().threads();
  ThreadPool::global().set_threads(3);
  for (int64_t m : {2, 3, 50, 300}) {
    for (bool transposed : {false, true}) {
      const Problem pr(m, 700, 300, transposed, false, 11);
      std::vector<float> whole = pr.c, split = pr.c, pieces = pr.c;
      sgemm(pr.args(whole));
      parallel_sgemm(pr.args(split));
      EXPECT_EQ(whole, split) << "m=" << m << " transposed=" << transposed;
      // Rows 0..m/2 and the rest, then columns 0..350 and the rest, in separate calls
      // (the rows path is chosen from each call's own rows, so only when both agree).
      if (m > 2 * 4) {
        SgemmArgs top = pr.args(pieces), bottom = top;
        top.m = m / 2;
        bottom.m = m - top.m;
        bottom.a += top.m * pr.lda();
        bottom.c += top.m * pr.ldc();
        sgemm(top);
        sgemm(bottom);
        EXPECT_EQ(whole, pieces) << "m=" << m << " transposed=" << transposed;
      }
    }
  }
  ThreadPool::global().set_threads(threads_before);
}

}  // namespace
}  // namespace et::kernels
