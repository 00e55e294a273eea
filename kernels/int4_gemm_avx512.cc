// int4_gemm's products with AVX-512 VNNI (compiled with -mavx512f -mavx512bw
// -mavx512vnni): vpdpbusd multiplies the activations plus 128 (unsigned bytes) by the
// unpacked weights (signed bytes) and accumulates four products per 32-bit lane.
//
// On 512-bit vectors, two blocks of 32 at a time: a pair's 32 bytes unpack into 64
// weights (low nibbles, then high); lanes 0-7 of the product hold the first block's
// sums and lanes 8-15 the second's, converted to float and scaled by their groups'
// scales (groups of 32 put the two halves in different groups) into per-row float
// lanes summed once per weight row. Rows of an odd number of
// blocks take the 256-bit loop of int4_gemm_simd.h.
#include <immintrin.h>

#include <cstring>

#include "kernels/int4_gemm.h"
#include "kernels/int4_gemm_simd.h"

// GCC 12 reports the intrinsics' own "undefined" upper halves (in cvtepi32_ps and the
// 256-to-512-bit inserts) as maybe-uninitialized; they are set before use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace et::kernels::detail {
namespace {

inline float horizontal_sum512(__m512 v) { return _mm512_reduce_add_ps(v); }

// kRows activation rows x kCols weight rows, 64 values a step. REQUIRES: w.group % 32
// == 0 and an even number of blocks a row.
template <size_t kRows, size_t kCols>
void tile512(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1, float* sums, size_t ld) {
  const size_t groups = w.groups_per_row(), blocks = w.blocks_per_row(), k = w.k;
  const size_t per_group = w.group / 32;
  const __m512i nibble = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  // Lanes 0-7 take the first of two scales, lanes 8-15 the second.
  const __m512i halves = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  for (size_t n = n0; n < n1; n += kCols) {
    const uint8_t* row[kCols];
    const float* scale[kCols];
    for (size_t c = 0; c < kCols; ++c) {
      row[c] = w.block_bytes(n + c, 0);
      scale[c] = w.scales.data() + (n + c) * groups;
    }
    __m512 total[kRows][kCols];
    for (size_t r = 0; r < kRows; ++r)
      for (size_t c = 0; c < kCols; ++c) total[r][c] = _mm512_setzero_ps();
    for (size_t b = 0; b < blocks; b += 2) {
      __m512i weights[kCols];
      __m512 s[kCols];
      for (size_t c = 0; c < kCols; ++c) {
        // A pair's 32 bytes: low nibbles are block b, high nibbles block b + 1.
        const __m256i bytes =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[c] + b / 2 * 32));
        const __m512i both =
            _mm512_inserti64x4(_mm512_zextsi256_si512(bytes), _mm256_srli_epi16(bytes, 4), 1);
        weights[c] = _mm512_sub_epi8(_mm512_and_si512(both, nibble), eight);
        if (per_group == 1) {  // two groups: their scales are adjacent
          double two;
          std::memmove(&two, scale[c] + b, sizeof(two));
          s[c] =
              _mm512_permutexvar_ps(halves, _mm512_zextps128_ps512(_mm_castpd_ps(_mm_set_sd(two))));
        } else {
          s[c] = _mm512_set1_ps(scale[c][b / per_group]);
        }
      }
      for (size_t r = 0; r < kRows; ++r) {
        const __m512i xs = _mm512_xor_si512(
            _mm512_loadu_si512(reinterpret_cast<const void*>(x + r * k + b * 32)), flip);
        for (size_t c = 0; c < kCols; ++c) {
          const __m512i acc = _mm512_dpbusd_epi32(_mm512_setzero_si512(), xs, weights[c]);
          total[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), s[c], total[r][c]);
        }
      }
    }
    for (size_t r = 0; r < kRows; ++r)
      for (size_t c = 0; c < kCols; ++c)
        sums[r * ld + (n + c - n0)] = horizontal_sum512(total[r][c]);
  }
}

template <size_t kRows, size_t kCols>
void cols512(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1, float* sums, size_t ld) {
  const size_t whole = n0 + (n1 - n0) / kCols * kCols;
  tile512<kRows, kCols>(x, w, n0, whole, sums, ld);
  tile512<kRows, 1>(x, w, whole, n1, sums + (whole - n0), ld);
}

}  // namespace

void int4_rows_avx512vnni(const int8_t* x, size_t rows, const Int4Weights& w, size_t n0, size_t n1,
                          float* sums, size_t ld) {
  if (w.blocks_per_row() % 2 != 0) {
    int4_rows_simd(x, rows, w, n0, n1, sums, ld, [](__m256i acc, __m256i xs, __m256i weights) {
      return _mm256_dpbusd_epi32(acc, xs, weights);
    });
    return;
  }
  switch (rows) {
    case 4:
      return cols512<4, 2>(x, w, n0, n1, sums, ld);
    case 3:
      return cols512<3, 2>(x, w, n0, n1, sums, ld);
    case 2:
      return cols512<2, 3>(x, w, n0, n1, sums, ld);
    default:
      return cols512<1, 4>(x, w, n0, n1, sums, ld);
  }
}

}  // namespace et::kernels::detail
