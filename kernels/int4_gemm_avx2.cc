// int4_gemm's products with AVX2 (compiled with -mavx2): each block of 32 weights is
// multiplied by the activations with vpmaddubsw (unsigned activations plus 128 x
// signed weights, pairs summed to 16 bits: at most 2 * 255 * 8, no saturation) and
// widened with vpmaddwd.
#include <immintrin.h>

#include "kernels/int4_gemm.h"
#include "kernels/int4_gemm_simd.h"

namespace et::kernels::detail {

void int4_rows_avx2(const int8_t* x, const int32_t* /*corr*/, size_t rows, const Int4Weights& w,
                    size_t n0, size_t n1, float* sums, size_t ld) {
  const __m256i ones = _mm256_set1_epi16(1);
  int4_rows_simd(x, rows, w, n0, n1, sums, ld, [&](__m256i acc, __m256i xs, __m256i weights) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(xs, weights), ones));
  });
}

}  // namespace et::kernels::detail
