// The dense products the matrix kernels share: gemm_nt (dot products against B's rows,
// as a linear layer's weight is laid out) against the definition, for sizes around
// its 4-column and 8-lane blocking, serial and split across threads.
#include "kernels/util/dense.h"

#include <gtest/gtest.h>

#include <random>

namespace et::kernels {
namespace {

TEST(GemmNt, MatchesTheDefinitionAroundItsBlocking) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int64_t m : {1, 2, 3, 5, 9}) {
    for (int64_t n : {1, 3, 4, 5, 8, 13}) {
      for (int64_t k : {1, 7, 8, 9, 16, 33}) {
        std::vector<double> a(m * k), b(n * k), c(m * n, -1);
        for (double& v : a) v = uniform(gen);
        for (double& v : b) v = uniform(gen);
        gemm_nt(m, n, k, a.data(), k, b.data(), k, c.data(), n);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = 0;
            for (int64_t p = 0; p < k; ++p) want += a[i * k + p] * b[j * k + p];
            ASSERT_NEAR(c[i * n + j], want, 1e-12) << m << "x" << n << "x" << k;
          }
        }
      }
    }
  }
}

TEST(GemmNt, ParallelSplitsGiveTheSerialResult) {
  std::mt19937 gen(6);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (int64_t m : {1, 2, 64}) {  // columns split for a row or two, rows split beyond
    const int64_t n = 257, k = 300;
    std::vector<float> a(m * k), b(n * k), serial(m * n), parallel(m * n);
    for (float& v : a) v = uniform(gen);
    for (float& v : b) v = uniform(gen);
    gemm_nt(m, n, k, a.data(), k, b.data(), k, serial.data(), n);
    parallel_gemm_nt(m, n, k, a.data(), k, b.data(), k, parallel.data(), n);
    EXPECT_EQ(serial, parallel) << m;
  }
}

}  // namespace
}  // namespace et::kernels
