// vector_math on every ISA this CPU has, against double-precision libm over a dense sweep
// of inputs, plus the edges: underflow, overflow, infinities, NaN.
#include "kernels/math/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace et::kernels {
namespace {

std::vector<float> sweep(float lo, float hi, int count) {
  std::vector<float> xs;
  for (int i = 0; i <= count; ++i) xs.push_back(lo + (hi - lo) * static_cast<float>(i) / count);
  for (float x : {0.0f, -0.0f, 0.4999999f, 0.5f, -0.5f, 1e-20f, -1e-20f, 3.5355339f, -3.5355339f})
    xs.push_back(x);
  return xs;
}

// Distance in units in the last place between a float and the double it should round to.
double ulps(float got, double want) {
  const float w = static_cast<float>(want);
  const float spacing =
      std::nextafter(std::abs(w), std::numeric_limits<float>::infinity()) - std::abs(w);
  return std::abs(static_cast<double>(got) - want) / spacing;
}

TEST(VectorMath, ExpIsWithinTwoUlpsAndSaturates) {
  const std::vector<float> xs = sweep(-87.0f, 88.0f, 200003);
  for (CpuIsa isa : available_isas()) {
    std::vector<float> ys(xs.size());
    exp_array_on(isa, xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
    double worst = 0;
    for (size_t i = 0; i < xs.size(); ++i)
      worst = std::max(worst, ulps(ys[i], std::exp(double(xs[i]))));
    EXPECT_LE(worst, 2.0) << isa_name(isa);
    const float edges[] = {-88.0f,
                           -1000.0f,
                           -std::numeric_limits<float>::infinity(),
                           89.0f,
                           std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN()};
    float out[6];
    exp_array_on(isa, edges, out, 6);
    EXPECT_EQ(out[0], 0.0f) << isa_name(isa);
    EXPECT_EQ(out[1], 0.0f) << isa_name(isa);
    EXPECT_EQ(out[2], 0.0f) << isa_name(isa);
    EXPECT_TRUE(std::isinf(out[3]) && out[3] > 0) << isa_name(isa);
    EXPECT_TRUE(std::isinf(out[4]) && out[4] > 0) << isa_name(isa);
    EXPECT_TRUE(std::isnan(out[5])) << isa_name(isa);
  }
}

TEST(VectorMath, GeluMatchesTheErfFormInDoublePrecision) {
  const std::vector<float> xs = sweep(-20.0f, 20.0f, 400001);
  for (CpuIsa isa : available_isas()) {
    std::vector<float> ys(xs.size());
    gelu_array_on(isa, xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      const double want = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
      if (std::abs(want) < 1e-30) {
        EXPECT_LE(std::abs(ys[i]), 1e-30) << isa_name(isa) << " x=" << x;
        continue;
      }
      const double rel = std::abs(ys[i] - want) / std::abs(want);
      if (rel > worst) worst = rel, worst_x = xs[i];
    }
    EXPECT_LE(worst, 5e-7) << isa_name(isa) << " at x=" << worst_x;
    const float edges[] = {std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN()};
    float out[3];
    gelu_array_on(isa, edges, out, 3);
    EXPECT_TRUE(std::isinf(out[0]) && out[0] > 0) << isa_name(isa);
    EXPECT_TRUE(std::isnan(out[2])) << isa_name(isa);
  }
}

// The worst distance in ulps from double-precision `want` over a sweep, per ISA.
template <typename Array, typename Want>
void expect_within_ulps(const char* what, Array array_on, Want want, float lo, float hi,
                        double max_ulps) {
  const std::vector<float> xs = sweep(lo, hi, 400001);
  for (CpuIsa isa : available_isas()) {
    std::vector<float> ys(xs.size());
    array_on(isa, xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double u = ulps(ys[i], want(double(xs[i])));
      if (u > worst) worst = u, worst_x = xs[i];
    }
    EXPECT_LE(worst, max_ulps) << what << " " << isa_name(isa) << " at x=" << worst_x;
    const float edges[] = {std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(), 1e-30f};
    float out[4];
    array_on(isa, edges, out, 4);
    EXPECT_EQ(out[0], static_cast<float>(want(std::numeric_limits<double>::infinity())))
        << what << " " << isa_name(isa);
    EXPECT_EQ(out[1], static_cast<float>(want(-std::numeric_limits<double>::infinity())))
        << what << " " << isa_name(isa);
    EXPECT_TRUE(std::isnan(out[2])) << what << " " << isa_name(isa);
    EXPECT_EQ(out[3], static_cast<float>(want(1e-30))) << what << " " << isa_name(isa);
  }
}

TEST(VectorMath, TanhAndSigmoidAreWithinFourUlps) {
  expect_within_ulps(
      "tanh", tanh_array_on, [](double x) { return std::tanh(x); }, -12.0f, 12.0f, 4.0);
  expect_within_ulps(
      "sigmoid", sigmoid_array_on, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -80.0f,
      30.0f, 4.0);
}

// The double overload: the same formula on doubles, against the plain two-pass definition.
TEST(VectorMath, LayerNormRowsInDouble) {
  const int64_t rows = 2, n = 37;
  std::vector<double> x(rows * n), w(n), b(n), y(rows * n), means(rows), rstds(rows);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 2.0 * std::sin(0.9 * i) - 0.25;
  for (int64_t i = 0; i < n; ++i) w[i] = 0.5 + 0.01 * i, b[i] = -0.1 * i;
  layer_norm_rows(x.data(), rows, n, w.data(), b.data(), 1e-5, y.data(), means.data(),
                  rstds.data());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[r * n + i] / n;
    for (int64_t i = 0; i < n; ++i) sq += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    const double rstd = 1.0 / std::sqrt(sq / n + 1e-5);
    EXPECT_NEAR(means[r], mean, 1e-14);
    EXPECT_NEAR(rstds[r], rstd, 1e-12 * rstd);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(y[r * n + i], (x[r * n + i] - mean) * rstd * w[i] + b[i], 1e-12);
    }
  }
}

// Layer norm rows on every ISA against a double-precision computation, with and without
// weight and bias, and rows whose length is not a multiple of the 8 sum lanes.
TEST(VectorMath, LayerNormRowsMatchDoublePrecision) {
  for (int64_t n : {1, 7, 8, 64, 131}) {
    const int64_t rows = 3;
    std::vector<float> x(static_cast<size_t>(rows * n)), w(static_cast<size_t>(n)),
        b(static_cast<size_t>(n));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 3.0f * std::sin(0.7f * i) + 0.5f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = 1.0f + 0.1f * std::cos(0.3f * i), b[i] = 0.01f * i;
    for (CpuIsa isa : available_isas()) {
      for (bool affine : {false, true}) {
        std::vector<float> y(x.size()), means(rows), rstds(rows);
        layer_norm_rows_on(isa, x.data(), rows, n, affine ? w.data() : nullptr,
                           affine ? b.data() : nullptr, 1e-5, y.data(), means.data(), rstds.data());
        for (int64_t r = 0; r < rows; ++r) {
          double mean = 0, sq = 0;
          for (int64_t i = 0; i < n; ++i) mean += x[r * n + i];
          mean /= n;
          for (int64_t i = 0; i < n; ++i) sq += (x[r * n + i] - mean) * (x[r * n + i] - mean);
          const double rstd = 1.0 / std::sqrt(sq / n + 1e-5);
          EXPECT_NEAR(means[r], mean, 1e-6) << isa_name(isa);
          EXPECT_NEAR(rstds[r], rstd, 1e-6 * rstd) << isa_name(isa);
          for (int64_t i = 0; i < n; ++i) {
            const double want =
                (x[r * n + i] - mean) * rstd * (affine ? w[i] : 1.0) + (affine ? b[i] : 0.0);
            EXPECT_NEAR(y[r * n + i], want, 2e-6 * (1 + std::abs(want)))
                << isa_name(isa) << " n=" << n << " affine=" << affine << " at " << i;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace et::kernels
