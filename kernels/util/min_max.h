// The smallest and largest of a row of floats, NaNs skipped, for the per-row dynamic
// quantizations (XNNPACK's qd8 Convert, choose_qparams_per_token): four 4-lane
// accumulators of SSE's minps/maxps (every x86-64 CPU has them), which compilers do
// not form from the scalar loop themselves.
#pragma once

#include <cstddef>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace et::kernels {

// From the starting lo and hi: lo = x < lo ? x : lo, hi = x > hi ? x : hi over the row.
// A NaN x changes nothing; a NaN start stays. Lanes give the sequential loop's value:
// min and max of non-NaN values do not depend on order. Only the sign of a zero
// result may differ, when the row holds both +0 and -0 below a nonzero start (ties
// keep what a lane holds first); from a zero start (XNNPACK's Convert) it cannot.
inline void min_max(const float* x, size_t n, float& lo, float& hi) {
  size_t i = 0;
#if defined(__SSE2__)
  if (n >= 16) {
    __m128 l[4], h[4];
    for (int j = 0; j < 4; ++j) l[j] = _mm_set1_ps(lo), h[j] = _mm_set1_ps(hi);
    for (; i + 16 <= n; i += 16) {
      for (int j = 0; j < 4; ++j) {
        const __m128 v = _mm_loadu_ps(x + i + 4 * j);
        // minps(a, b) is a < b ? a : b, maxps(a, b) a > b ? a : b: b when either is NaN.
        l[j] = _mm_min_ps(v, l[j]);
        h[j] = _mm_max_ps(v, h[j]);
      }
    }
    alignas(16) float ls[16], hs[16];
    for (int j = 0; j < 4; ++j) _mm_store_ps(ls + 4 * j, l[j]), _mm_store_ps(hs + 4 * j, h[j]);
    for (int j = 0; j < 16; ++j) {
      lo = ls[j] < lo ? ls[j] : lo;
      hi = hs[j] > hi ? hs[j] : hi;
    }
  }
#endif
  for (; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
}

}  // namespace et::kernels
