#include "kernels/util/min_max.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace et::kernels {
namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

// min_max against the sequential loop it stands for, bit for bit: lengths around the
// vector width, NaNs anywhere (skipped) or at the start (kept), signed zeros.
TEST(MinMax, MatchesTheSequentialLoop) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-5.0f, 5.0f);
  std::uniform_int_distribution<int> special(0, 9);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t n : {0, 1, 15, 16, 17, 33, 64, 100}) {
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> x(n);
      for (float& v : x) {
        const int s = special(rng);
        v = s == 0 ? nan : s == 1 ? -0.0f : s == 2 ? 0.0f : value(rng);
      }
      for (float start : {0.0f, -0.0f, nan, 1.0f}) {
        float lo = start, hi = start, want_lo = start, want_hi = start;
        for (float v : x) {
          want_lo = v < want_lo ? v : want_lo;
          want_hi = v > want_hi ? v : want_hi;
        }
        min_max(x.data(), n, lo, hi);
        ASSERT_TRUE(same_bits(lo, want_lo)) << n << " start " << start << ": " << lo;
        ASSERT_TRUE(same_bits(hi, want_hi)) << n << " start " << start << ": " << hi;
      }
    }
  }
}

}  // namespace
}  // namespace et::kernels
