// sgemm's AVX2+FMA microkernels (compiled with -mavx2 -mfma; only called when the CPU
// has both): a 6 x 16 register tile, 12 accumulators of 8 floats.
#include <immintrin.h>

#include "kernels/math/sgemm_blocked.h"

namespace et::kernels::detail {
namespace {

// The sum of a vector's 8 lanes.
float lane_sum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

struct Avx2 {
  static constexpr int kMr = 6, kNr = 16, kKc = 256, kMc = 96, kNc = 1024;

  template <int R, bool kRowsA>
  static void tile(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                   bool accumulate) {
    __m256 lo[R], hi[R];
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) lo[i] = hi[i] = _mm256_setzero_ps();
    for (int64_t p = 0; p < kc; ++p) {
      const __m256 b0 = _mm256_loadu_ps(b + p * kNr), b1 = _mm256_loadu_ps(b + p * kNr + 8);
#pragma GCC unroll 6
      for (int i = 0; i < R; ++i) {
        const __m256 x = _mm256_broadcast_ss(a + (kRowsA ? i * lda + p : p * kMr + i));
        lo[i] = _mm256_fmadd_ps(x, b0, lo[i]);
        hi[i] = _mm256_fmadd_ps(x, b1, hi[i]);
      }
    }
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      float* row = c + i * ldc;
      if (accumulate) {
        lo[i] = _mm256_add_ps(_mm256_loadu_ps(row), lo[i]);
        hi[i] = _mm256_add_ps(_mm256_loadu_ps(row + 8), hi[i]);
      }
      _mm256_storeu_ps(row, lo[i]);
      _mm256_storeu_ps(row + 8, hi[i]);
    }
  }

  static void row(int64_t k, const float* a, const float* b, int64_t ldb, int64_t n, float* c,
                  bool accumulate) {
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) {
      __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      for (int64_t p = 0; p < k; ++p) {
        const float* r = b + p * ldb + j;
        const __m256 x = _mm256_broadcast_ss(a + p);
        s0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r), s0);
        s1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r + 8), s1);
        s2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r + 16), s2);
        s3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r + 24), s3);
      }
      __m256 sums[4] = {s0, s1, s2, s3};
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) {
        if (accumulate) sums[v] = _mm256_add_ps(_mm256_loadu_ps(c + j + 8 * v), sums[v]);
        _mm256_storeu_ps(c + j + 8 * v, sums[v]);
      }
    }
    for (; j + 8 <= n; j += 8) {
      __m256 s = _mm256_setzero_ps();
      for (int64_t p = 0; p < k; ++p) {
        s = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p), _mm256_loadu_ps(b + p * ldb + j), s);
      }
      if (accumulate) s = _mm256_add_ps(_mm256_loadu_ps(c + j), s);
      _mm256_storeu_ps(c + j, s);
    }
    for (; j < n; ++j) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s = __builtin_fmaf(a[p], b[p * ldb + j], s);
      c[j] = accumulate ? c[j] + s : s;
    }
  }

  static void row_transposed(int64_t k, const float* a, const float* b, int64_t ldb, int64_t n,
                             float* c, bool accumulate) {
    const int64_t k_main = k / 8 * 8;
    auto finish = [&](__m256 lanes, const float* column) {
      float s = lane_sum(lanes);
      for (int64_t p = k_main; p < k; ++p) s = __builtin_fmaf(a[p], column[p], s);
      return s;
    };
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const float* b0 = b + j * ldb;
      const float* b1 = b0 + ldb;
      const float* b2 = b1 + ldb;
      const float* b3 = b2 + ldb;
      __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      for (int64_t p = 0; p < k_main; p += 8) {
        const __m256 x = _mm256_loadu_ps(a + p);
        s0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b0 + p), s0);
        s1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b1 + p), s1);
        s2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b2 + p), s2);
        s3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b3 + p), s3);
      }
      const float r[4] = {finish(s0, b0), finish(s1, b1), finish(s2, b2), finish(s3, b3)};
      for (int v = 0; v < 4; ++v) c[j + v] = accumulate ? c[j + v] + r[v] : r[v];
    }
    for (; j < n; ++j) {
      const float* column = b + j * ldb;
      __m256 s = _mm256_setzero_ps();
      for (int64_t p = 0; p < k_main; p += 8) {
        s = _mm256_fmadd_ps(_mm256_loadu_ps(a + p), _mm256_loadu_ps(column + p), s);
      }
      const float r = finish(s, column);
      c[j] = accumulate ? c[j] + r : r;
    }
  }
};

}  // namespace

void sgemm_avx2(const SgemmArgs& args, bool rows_path) { blocked_sgemm<Avx2>(args, rows_path); }

PackedKernel packed_kernel_avx2() { return {Avx2::kMr, Avx2::kNr, &packed_panels<Avx2>}; }

}  // namespace et::kernels::detail
