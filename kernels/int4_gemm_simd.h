// The loop both vector paths of int4_gemm share; included only by files compiled for
// AVX2 or later. `dot(acc, weights, xs)` adds the products of 32 unsigned weight bytes
// and 32 signed activation bytes into acc's eight 32-bit lanes.
#pragma once

#include <immintrin.h>

#include "kernels/int4_gemm.h"

namespace et::kernels::detail {

inline int32_t horizontal_sum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_hadd_epi32(s, s);
  s = _mm_hadd_epi32(s, s);
  return _mm_cvtsi128_si32(s);
}

// REQUIRES: w.group % 32 == 0.
template <typename Dot>
inline void int4_dots_simd(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1,
                           int32_t* dots, Dot dot) {
  const size_t groups = w.groups_per_row(), blocks = w.blocks_per_row();
  const size_t per_group = w.group / 32;
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  for (size_t n = n0; n < n1; ++n) {
    const uint8_t* row = w.packed.data() + n * blocks * 16;
    for (size_t g = 0; g < groups; ++g) {
      __m256i acc = _mm256_setzero_si256();
      for (size_t b = g * per_group; b < (g + 1) * per_group; ++b) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + b * 16));
        // Low nibbles are values 0..15 of the block, high nibbles 16..31.
        const __m256i weights =
            _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(bytes, 4), bytes), nibble);
        const __m256i xs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + b * 32));
        acc = dot(acc, weights, xs);
      }
      dots[(n - n0) * groups + g] = horizontal_sum(acc);
    }
  }
}

}  // namespace et::kernels::detail
