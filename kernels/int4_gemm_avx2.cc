// int4_gemm's dot products with AVX2 (compiled with -mavx2): each block of 32 weights
// is unpacked to bytes with one shift and mask, multiplied by the activations with
// vpmaddubsw (unsigned weights x signed activations, pairs summed to 16 bits: at most
// 2 * 15 * 128, no saturation) and widened with vpmaddwd.
#include <immintrin.h>

#include "kernels/int4_gemm.h"
#include "kernels/int4_gemm_simd.h"

namespace et::kernels::detail {

void int4_dots_avx2(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1, int32_t* dots) {
  const __m256i ones = _mm256_set1_epi16(1);
  int4_dots_simd(x, w, n0, n1, dots, [&](__m256i acc, __m256i weights, __m256i xs) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(weights, xs), ones));
  });
}

}  // namespace et::kernels::detail
