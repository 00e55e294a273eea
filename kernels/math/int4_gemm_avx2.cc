// int4_gemm's products with AVX2 (compiled with -mavx2): each block of 32 weights is
// multiplied by the activations with vpmaddubsw (unsigned activations plus 128 x
// signed weights, pairs summed to 16 bits: at most 2 * 255 * 8, no saturation) and
// widened with vpmaddwd.
//
// For each weight row and up to kTileRows activation rows: each block of 32 weights is
// unpacked once (a shift, a mask and the stored 8 taken off) and multiplied into every
// activation row's integer accumulator; at the end of a group each accumulator is
// converted to float and added, times the group's scale, into that row's float lanes,
// which are summed across lanes once per weight row, less the 128 * sum w the
// activations' offset added (w.scaled_sums).
#include <immintrin.h>

#include "kernels/math/int4_gemm.h"

namespace et::kernels::detail {
namespace {

// acc plus the products of 32 unsigned activation bytes (x + 128) and 32 signed weight
// bytes, four to each of acc's eight 32-bit lanes.
__m256i dot(__m256i acc, __m256i xs, __m256i weights) {
  return _mm256_add_epi32(
      acc, _mm256_madd_epi16(_mm256_maddubs_epi16(xs, weights), _mm256_set1_epi16(1)));
}

float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// kRows activation rows x kCols weight rows at a time: independent accumulators, so
// the float additions of one weight row do not wait on each other, and each
// activation block loaded serves kCols weight rows.
// REQUIRES: w.group % 32 == 0.
template <size_t kRows, size_t kCols>
void int4_rows_tile(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1, float* sums,
                    size_t ld) {
  const size_t groups = w.groups_per_row(), kp = w.padded_k();
  const size_t per_group = w.group / 32;
  const __m256i nibble = _mm256_set1_epi8(0x0F), eight = _mm256_set1_epi8(8);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  for (size_t n = n0; n < n1; n += kCols) {
    __m256 total[kRows][kCols];
    for (size_t r = 0; r < kRows; ++r)
      for (size_t c = 0; c < kCols; ++c) total[r][c] = _mm256_setzero_ps();
    for (size_t g = 0; g < groups; ++g) {
      __m256i acc[kRows][kCols];
      for (size_t r = 0; r < kRows; ++r)
        for (size_t c = 0; c < kCols; ++c) acc[r][c] = _mm256_setzero_si256();
      for (size_t b = g * per_group; b < (g + 1) * per_group; ++b) {
        __m256i weights[kCols];
        for (size_t c = 0; c < kCols; ++c) {
          const __m256i bytes =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.block_bytes(n + c, b)));
          const __m256i nibbles =
              Int4Weights::block_in_high_nibbles(b) ? _mm256_srli_epi16(bytes, 4) : bytes;
          weights[c] = _mm256_sub_epi8(_mm256_and_si256(nibbles, nibble), eight);
        }
        for (size_t r = 0; r < kRows; ++r) {
          const __m256i xs = _mm256_xor_si256(
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + r * kp + b * 32)), flip);
          for (size_t c = 0; c < kCols; ++c) acc[r][c] = dot(acc[r][c], xs, weights[c]);
        }
      }
      for (size_t c = 0; c < kCols; ++c) {
        const __m256 s = _mm256_set1_ps(w.scale(n + c, g));
        for (size_t r = 0; r < kRows; ++r) {
          total[r][c] = _mm256_add_ps(total[r][c], _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][c]), s));
        }
      }
    }
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t c = 0; c < kCols; ++c) {
        sums[r * ld + (n + c - n0)] = horizontal_sum(total[r][c]) - 128.0f * w.scaled_sums[n + c];
      }
    }
  }
}

template <size_t kRows, size_t kCols>
void int4_rows_cols(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1, float* sums,
                    size_t ld) {
  const size_t whole = n0 + (n1 - n0) / kCols * kCols;
  int4_rows_tile<kRows, kCols>(x, w, n0, whole, sums, ld);
  int4_rows_tile<kRows, 1>(x, w, whole, n1, sums + (whole - n0), ld);
}

}  // namespace

void int4_rows_avx2(const int8_t* x, const int32_t* /*corr*/, size_t rows, const Int4Weights& w,
                    size_t n0, size_t n1, float* sums, size_t ld) {
  switch (rows) {
    case 4:
      return int4_rows_cols<4, 2>(x, w, n0, n1, sums, ld);
    case 3:
      return int4_rows_cols<3, 2>(x, w, n0, n1, sums, ld);
    case 2:
      return int4_rows_cols<2, 3>(x, w, n0, n1, sums, ld);
    default:
      return int4_rows_cols<1, 4>(x, w, n0, n1, sums, ld);
  }
}

}  // namespace et::kernels::detail
