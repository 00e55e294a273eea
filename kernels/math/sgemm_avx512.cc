// sgemm's AVX-512F microkernels (compiled with -mavx512f; only called when the CPU and
// the OS support it): an 8 x 32 register tile, 16 accumulators of 16 floats.
#include <immintrin.h>

#include "kernels/math/sgemm_blocked.h"

namespace et::kernels::detail {
namespace {

// The sum of a vector's 16 lanes, pairwise. (Not _mm512_reduce_add_ps: GCC 12 warns that
// its _mm256_undefined_pd may be used uninitialized.)
float lane_sum(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  for (int width = 8; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

struct Avx512 {
  static constexpr int kMr = 8, kNr = 32, kKc = 256, kMc = 128, kNc = 1024;

  template <int R, bool kRowsA>
  static void tile(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                   bool accumulate) {
    __m512 lo[R], hi[R];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) lo[i] = hi[i] = _mm512_setzero_ps();
    for (int64_t p = 0; p < kc; ++p) {
      // B a kilobyte ahead: packed_sgemm's weights stream from memory through the
      // first row tile of each block (packed blocks of sgemm are in cache already).
      _mm_prefetch(reinterpret_cast<const char*>(b + p * kNr + 256), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(b + p * kNr + 256 + 16), _MM_HINT_T0);
      const __m512 b0 = _mm512_loadu_ps(b + p * kNr), b1 = _mm512_loadu_ps(b + p * kNr + 16);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const __m512 x = _mm512_set1_ps(a[kRowsA ? i * lda + p : p * kMr + i]);
        lo[i] = _mm512_fmadd_ps(x, b0, lo[i]);
        hi[i] = _mm512_fmadd_ps(x, b1, hi[i]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      float* row = c + i * ldc;
      if (accumulate) {
        lo[i] = _mm512_add_ps(_mm512_loadu_ps(row), lo[i]);
        hi[i] = _mm512_add_ps(_mm512_loadu_ps(row + 16), hi[i]);
      }
      _mm512_storeu_ps(row, lo[i]);
      _mm512_storeu_ps(row + 16, hi[i]);
    }
  }

  static void row(int64_t k, const float* a, const float* b, int64_t ldb, int64_t n, float* c,
                  bool accumulate) {
    int64_t j = 0;
    for (; j + 64 <= n; j += 64) {
      __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      for (int64_t p = 0; p < k; ++p) {
        const float* r = b + p * ldb + j;
        const __m512 x = _mm512_set1_ps(a[p]);
        s0 = _mm512_fmadd_ps(x, _mm512_loadu_ps(r), s0);
        s1 = _mm512_fmadd_ps(x, _mm512_loadu_ps(r + 16), s1);
        s2 = _mm512_fmadd_ps(x, _mm512_loadu_ps(r + 32), s2);
        s3 = _mm512_fmadd_ps(x, _mm512_loadu_ps(r + 48), s3);
      }
      __m512 sums[4] = {s0, s1, s2, s3};
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) {
        if (accumulate) sums[v] = _mm512_add_ps(_mm512_loadu_ps(c + j + 16 * v), sums[v]);
        _mm512_storeu_ps(c + j + 16 * v, sums[v]);
      }
    }
    for (; j < n; j += 16) {
      // The last columns under a mask: lanes past n are neither read nor written.
      const int64_t w = n - j < 16 ? n - j : 16;
      const __mmask16 mask = static_cast<__mmask16>((1u << w) - 1u);
      __m512 s = _mm512_setzero_ps();
      for (int64_t p = 0; p < k; ++p) {
        s = _mm512_fmadd_ps(_mm512_set1_ps(a[p]), _mm512_maskz_loadu_ps(mask, b + p * ldb + j), s);
      }
      if (accumulate) s = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, c + j), s);
      _mm512_mask_storeu_ps(c + j, mask, s);
    }
  }

  static void row_transposed(int64_t k, const float* a, const float* b, int64_t ldb, int64_t n,
                             float* c, bool accumulate) {
    const int64_t k_main = k / 16 * 16;
    const int64_t rest = k - k_main;
    const __mmask16 tail = static_cast<__mmask16>((1u << rest) - 1u);
    // Lanes past k in the last step are masked to zero, so each column is one vector
    // sum of 16 partial sums.
    auto dot_step = [&](const float* column, int64_t p, __m512 s, __mmask16 mask) {
      return _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, a + p),
                             _mm512_maskz_loadu_ps(mask, column + p), s);
    };
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const float* b0 = b + j * ldb;
      const float* b1 = b0 + ldb;
      const float* b2 = b1 + ldb;
      const float* b3 = b2 + ldb;
      __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      for (int64_t p = 0; p < k_main; p += 16) {
        const __m512 x = _mm512_loadu_ps(a + p);
        s0 = _mm512_fmadd_ps(x, _mm512_loadu_ps(b0 + p), s0);
        s1 = _mm512_fmadd_ps(x, _mm512_loadu_ps(b1 + p), s1);
        s2 = _mm512_fmadd_ps(x, _mm512_loadu_ps(b2 + p), s2);
        s3 = _mm512_fmadd_ps(x, _mm512_loadu_ps(b3 + p), s3);
      }
      if (rest > 0) {
        s0 = dot_step(b0, k_main, s0, tail);
        s1 = dot_step(b1, k_main, s1, tail);
        s2 = dot_step(b2, k_main, s2, tail);
        s3 = dot_step(b3, k_main, s3, tail);
      }
      const float r[4] = {lane_sum(s0), lane_sum(s1), lane_sum(s2), lane_sum(s3)};
      for (int v = 0; v < 4; ++v) c[j + v] = accumulate ? c[j + v] + r[v] : r[v];
    }
    for (; j < n; ++j) {
      const float* column = b + j * ldb;
      __m512 s = _mm512_setzero_ps();
      for (int64_t p = 0; p < k_main; p += 16) s = dot_step(column, p, s, 0xffff);
      if (rest > 0) s = dot_step(column, k_main, s, tail);
      const float r = lane_sum(s);
      c[j] = accumulate ? c[j] + r : r;
    }
  }
};

}  // namespace

void sgemm_avx512(const SgemmArgs& args, bool rows_path) { blocked_sgemm<Avx512>(args, rows_path); }

PackedKernel packed_kernel_avx512() { return {Avx512::kMr, Avx512::kNr, &packed_panels<Avx512>}; }

}  // namespace et::kernels::detail
