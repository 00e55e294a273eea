// int4_gemm's products with AVX-512 VNNI on 256-bit vectors (compiled with
// -mavx512vnni -mavx512vl): vpdpbusd multiplies the activations plus 128 (unsigned
// bytes) by the unpacked weights (signed bytes) and accumulates four products per 32-bit lane.
#include <immintrin.h>

#include "kernels/int4_gemm.h"
#include "kernels/int4_gemm_simd.h"

namespace et::kernels::detail {

void int4_rows_avx512vnni(const int8_t* x, size_t rows, const Int4Weights& w, size_t n0, size_t n1,
                          float* sums, size_t ld) {
  int4_rows_simd(x, rows, w, n0, n1, sums, ld, [](__m256i acc, __m256i xs, __m256i weights) {
    return _mm256_dpbusd_epi32(acc, xs, weights);
  });
}

}  // namespace et::kernels::detail
