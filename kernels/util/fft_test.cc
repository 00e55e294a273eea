// The line transforms behind aten::_fft_*: radix-2 and Bluestein against the
// transform's definition, every length from 1 to 70 and some large odd ones, both
// directions, and a round trip.
#include "kernels/util/fft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

namespace et::kernels {
namespace {

using Complex = std::complex<double>;

std::vector<Complex> definition(const std::vector<Complex>& x, double sign) {
  const size_t n = x.size();
  std::vector<Complex> out(n);
  for (size_t k = 0; k < n; ++k) {
    for (size_t j = 0; j < n; ++j) {
      const double angle =
          sign * 2 * std::numbers::pi * static_cast<double>((k * j) % n) / static_cast<double>(n);
      out[k] += x[j] * Complex(std::cos(angle), std::sin(angle));
    }
  }
  return out;
}

Signal line_of(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  Signal s;
  s.shape.rank = 1;
  s.shape.sizes[0] = static_cast<int64_t>(n);
  for (size_t i = 0; i < n; ++i) s.values.emplace_back(normal(gen), normal(gen));
  return s;
}

TEST(Fft, EveryLengthMatchesTheDefinitionBothWays) {
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 70; ++n) lengths.push_back(n);
  for (size_t n : {97, 128, 400, 1000, 1021}) lengths.push_back(n);
  for (size_t n : lengths) {
    for (bool inverse : {false, true}) {
      Signal s = line_of(n, static_cast<unsigned>(n));
      const std::vector<Complex> want = definition(s.values, inverse ? 1.0 : -1.0);
      transform(s, 0, inverse);
      double worst = 0;
      for (size_t k = 0; k < n; ++k) worst = std::max(worst, std::abs(s.values[k] - want[k]));
      EXPECT_LT(worst, 1e-9 * static_cast<double>(n)) << "n " << n << " inverse " << inverse;
    }
  }
}

TEST(Fft, ForwardThenInverseGivesNTimesTheSignal) {
  for (size_t n : {6, 64, 243, 4099}) {
    Signal s = line_of(n, 7);
    const std::vector<Complex> original = s.values;
    transform(s, 0, false);
    transform(s, 0, true);
    for (size_t k = 0; k < n; ++k) {
      ASSERT_LT(std::abs(s.values[k] / static_cast<double>(n) - original[k]), 1e-9) << n;
    }
  }
}

// Every line along an inner dim of a 3-d signal, not only a single line.
TEST(Fft, TransformsEachLineAlongTheDim) {
  Signal s;
  s.shape.rank = 3;
  s.shape.sizes = {2, 5, 3};
  for (int i = 0; i < 30; ++i) s.values.emplace_back(i * 0.5 - 3, i % 7);
  const Signal before = s;
  transform(s, 1, false);
  for (int a = 0; a < 2; ++a) {
    for (int c = 0; c < 3; ++c) {
      std::vector<Complex> line;
      for (int b = 0; b < 5; ++b) line.push_back(before.values[(a * 5 + b) * 3 + c]);
      const std::vector<Complex> want = definition(line, -1.0);
      for (int b = 0; b < 5; ++b) {
        EXPECT_LT(std::abs(s.values[(a * 5 + b) * 3 + c] - want[b]), 1e-9) << a << b << c;
      }
    }
  }
}

}  // namespace
}  // namespace et::kernels
