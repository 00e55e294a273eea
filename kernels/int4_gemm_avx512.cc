// int4_gemm's dot products with AVX-512 VNNI on 256-bit vectors (compiled with
// -mavx512vnni -mavx512vl): vpdpbusd multiplies the unpacked weights (unsigned bytes)
// by the activations (signed bytes) and accumulates four products per 32-bit lane.
#include <immintrin.h>

#include "kernels/int4_gemm.h"
#include "kernels/int4_gemm_simd.h"

namespace et::kernels::detail {

void int4_dots_avx512vnni(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1,
                          int32_t* dots) {
  int4_dots_simd(x, w, n0, n1, dots, [](__m256i acc, __m256i weights, __m256i xs) {
    return _mm256_dpbusd_epi32(acc, weights, xs);
  });
}

}  // namespace et::kernels::detail
