// transpose_plane for 4-byte elements, compiled with -mavx2 (called only when the CPU
// has it). The shuffles move bit patterns, never arithmetic: any 4-byte type is safe.
#include <immintrin.h>

#include "kernels/math/transpose.h"
#include "kernels/math/transpose_impl.h"

namespace et::kernels::detail {
namespace {

// An 8x8 block: out row c = in column c. Pairs of rows interleave (unpack), pairs of
// pairs gather four rows per 128-bit lane (shuffle), and the two lanes of rows 0-3 and
// 4-7 meet (permute2f128).
inline void transpose_8x8(const float* in, int64_t in_stride, float* out, int64_t out_stride) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * in_stride);
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3 | a6 b6 a7 b7
  }
  __m256 s[8];
  for (int h = 0; h < 8; h += 4) {
    s[h + 0] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));      // col 0 | 4
    s[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));      // col 1 | 5
    s[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));  // col 2 | 6
    s[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));  // col 3 | 7
  }
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(out + c * out_stride, _mm256_permute2f128_ps(s[c], s[c + 4], 0x20));
    _mm256_storeu_ps(out + (c + 4) * out_stride, _mm256_permute2f128_ps(s[c], s[c + 4], 0x31));
  }
}

}  // namespace

void transpose_plane32_avx2(const uint32_t* in, int64_t in_stride, uint32_t* out,
                            int64_t out_stride, int64_t rows, int64_t cols) {
  // Tiles of kTile x kTile, block by block: the tile's input and output lines stay in L1.
  constexpr int64_t kTile = 64;
  const int64_t full_rows = rows / 8 * 8, full_cols = cols / 8 * 8;
  const auto* fin = reinterpret_cast<const float*>(in);
  auto* fout = reinterpret_cast<float*>(out);
  for (int64_t rt = 0; rt < full_rows; rt += kTile) {
    const int64_t re = rt + kTile < full_rows ? rt + kTile : full_rows;
    for (int64_t ct = 0; ct < full_cols; ct += kTile) {
      const int64_t ce = ct + kTile < full_cols ? ct + kTile : full_cols;
      for (int64_t c = ct; c < ce; c += 8) {
        for (int64_t r = rt; r < re; r += 8) {
          transpose_8x8(fin + r * in_stride + c, in_stride, fout + c * out_stride + r, out_stride);
        }
      }
    }
  }
  // The edges: the last cols % 8 columns of every row, and the last rows % 8 rows.
  transpose_tiles(in, in_stride, out, out_stride, 0, full_rows, full_cols, cols);
  transpose_tiles(in, in_stride, out, out_stride, full_rows, rows, 0, cols);
}

}  // namespace et::kernels::detail
