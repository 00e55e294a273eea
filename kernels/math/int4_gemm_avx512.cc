// int4_gemm's products with AVX-512 VNNI (compiled with -mavx512f -mavx512bw
// -mavx512vnni): vpdpbusd multiplies unsigned bytes by signed ones and accumulates four
// products per 32-bit lane (see tile512 for which bytes are which).
//
// A chunk's 64 bytes (128 weights) give two vectors: the low nibbles are values 0-63
// and the high nibbles 64-127, each against 64 consecutive activations. Lanes 0-7 of a
// product hold one block's sums and lanes 8-15 the next one's; each is converted to
// float and scaled by its group's scale into per-row float lanes, summed once per
// weight row. Groups of 32 put the four blocks of a chunk in four groups (one load of
// four scales, spread by two permutes); groups of 64, two; groups of a multiple of 128,
// one; any other multiple of 32 looks each block's group up. That layout serves one row
// (a decode step); several rows (a prefill) go through int4_panel_rows_avx512vnni,
// which repacks 16 weight rows at a time so that the lanes of a product are 16 columns:
// a group's sums are then converted and scaled once per 16 columns, not once per 16
// lanes of one column (measured: a 34-token 8da4w prefill 15.7 -> 9.4 ms).
#include <immintrin.h>

#include "kernels/math/int4_gemm.h"

// GCC 12 reports the intrinsics' own "undefined" upper halves (in cvtepi32_ps and the
// 128-to-512-bit casts) as maybe-uninitialized; they are set before use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace et::kernels::detail {
namespace {

enum class Groups { k32, k64, kChunk, kOther };

// The scales of a chunk's two vectors (lanes 0-7 and 8-15 each one block's).
template <Groups kGroups>
inline void chunk_scales(const float* scale, size_t chunk, size_t group, __m512& lo, __m512& hi) {
  const __m512i first = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i second = _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2);
  if constexpr (kGroups == Groups::k32) {
    const __m512 four = _mm512_castps128_ps512(_mm_loadu_ps(scale + chunk * 4));
    lo = _mm512_permutexvar_ps(first, four);
    hi = _mm512_permutexvar_ps(second, four);
  } else if constexpr (kGroups == Groups::k64) {
    lo = _mm512_set1_ps(scale[chunk * 2]);
    hi = _mm512_set1_ps(scale[chunk * 2 + 1]);
  } else if constexpr (kGroups == Groups::kChunk) {
    lo = hi = _mm512_set1_ps(scale[chunk * 128 / group]);
  } else {
    const size_t b = chunk * 4;
    const __m512 four = _mm512_castps128_ps512(
        _mm_setr_ps(scale[b * 32 / group], scale[(b + 1) * 32 / group], scale[(b + 2) * 32 / group],
                    scale[(b + 3) * 32 / group]));
    lo = _mm512_permutexvar_ps(first, four);
    hi = _mm512_permutexvar_ps(second, four);
  }
}

// kRows activation rows x kCols weight rows, a chunk (128 weights) a step. One row
// multiplies the stored weights by x from its corrections (no work per weight vector
// but the unpacking); several rows instead multiply x + 128 (unsigned) by the weights
// (stored - 8), which costs a subtraction per weight vector, shared by the rows, and
// keeps the corrections out of the registers the rows' accumulators need: their sums
// exceed sum x * w by 128 * sum w, taken off at the end (w.scaled_sums).
template <size_t kRows, size_t kCols, Groups kGroups>
void tile512(const int8_t* x, const int32_t* corr, const Int4Weights& w, size_t n0, size_t n1,
             float* sums, size_t ld) {
  constexpr bool kCorrected = kRows == 1;
  const size_t chunks = w.chunks_per_row(), kp = w.padded_k();
  const __m512i nibble = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (size_t n = n0; n < n1; n += kCols) {
    const uint8_t* row[kCols];
    const float* scale[kCols];
    for (size_t c = 0; c < kCols; ++c) {
      row[c] = w.packed.data() + (n + c) * chunks * 64;
      scale[c] = w.scales.data() + (n + c) * w.scale_stride;
    }
    __m512 total[kRows][kCols];
    for (size_t r = 0; r < kRows; ++r)
      for (size_t c = 0; c < kCols; ++c) total[r][c] = _mm512_setzero_ps();
    for (size_t ch = 0; ch < chunks; ++ch) {
      __m512i x_lo[kRows], x_hi[kRows], start_lo[kRows], start_hi[kRows];
      for (size_t r = 0; r < kRows; ++r) {
        const int8_t* xr = x + r * kp + ch * 128;
        x_lo[r] = _mm512_loadu_si512(xr);
        x_hi[r] = _mm512_loadu_si512(xr + 64);
        if constexpr (kCorrected) {
          const int32_t* cr = corr + ch * 32;  // kCorrected: the one row's
          start_lo[r] = _mm512_loadu_si512(cr);
          start_hi[r] = _mm512_loadu_si512(cr + 16);
        } else {
          x_lo[r] = _mm512_xor_si512(x_lo[r], flip);
          x_hi[r] = _mm512_xor_si512(x_hi[r], flip);
          start_lo[r] = start_hi[r] = _mm512_setzero_si512();
        }
      }
      for (size_t c = 0; c < kCols; ++c) {
        const __m512i bytes = _mm512_loadu_si512(row[c] + ch * 64);
        __m512i lo = _mm512_and_si512(bytes, nibble);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble);
        if constexpr (!kCorrected) {
          lo = _mm512_sub_epi8(lo, eight);
          hi = _mm512_sub_epi8(hi, eight);
        }
        __m512 s_lo, s_hi;
        chunk_scales<kGroups>(scale[c], ch, w.group, s_lo, s_hi);
        for (size_t r = 0; r < kRows; ++r) {
          // Unsigned bytes first: the stored weights, or x + 128.
          const __m512i a_lo = kCorrected ? _mm512_dpbusd_epi32(start_lo[r], lo, x_lo[r])
                                          : _mm512_dpbusd_epi32(start_lo[r], x_lo[r], lo);
          const __m512i a_hi = kCorrected ? _mm512_dpbusd_epi32(start_hi[r], hi, x_hi[r])
                                          : _mm512_dpbusd_epi32(start_hi[r], x_hi[r], hi);
          total[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a_lo), s_lo, total[r][c]);
          total[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a_hi), s_hi, total[r][c]);
        }
      }
    }
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t c = 0; c < kCols; ++c) {
        const float excess = kCorrected ? 0.0f : 128.0f * w.scaled_sums[n + c];
        sums[r * ld + (n + c - n0)] = _mm512_reduce_add_ps(total[r][c]) - excess;
      }
    }
  }
}

template <size_t kRows, size_t kCols, Groups kGroups>
void cols512(const int8_t* x, const int32_t* corr, const Int4Weights& w, size_t n0, size_t n1,
             float* sums, size_t ld) {
  const size_t whole = n0 + (n1 - n0) / kCols * kCols;
  tile512<kRows, kCols, kGroups>(x, corr, w, n0, whole, sums, ld);
  tile512<kRows, 1, kGroups>(x, corr, w, whole, n1, sums + (whole - n0), ld);
}

template <Groups kGroups>
void rows512(const int8_t* x, const int32_t* corr, size_t rows, const Int4Weights& w, size_t n0,
             size_t n1, float* sums, size_t ld) {
  switch (rows) {
    case 4:
      return cols512<4, 2, kGroups>(x, corr, w, n0, n1, sums, ld);
    case 3:
      return cols512<3, 2, kGroups>(x, corr, w, n0, n1, sums, ld);
    case 2:
      return cols512<2, 3, kGroups>(x, corr, w, n0, n1, sums, ld);
    default:
      return cols512<1, 4, kGroups>(x, corr, w, n0, n1, sums, ld);
  }
}

// Several rows against one panel of 16 columns repacked into lanes (see
// int4_panel_rows_avx512vnni): kRows rows of x + 128 (unsigned), four bytes broadcast
// a step, into 16 column lanes; a group's integer sums are converted and scaled once
// per row for the 16 columns.
template <size_t kRows>
void panel_tile(const uint8_t* xf, size_t kp, const int8_t* panel, const float* panel_scales,
                size_t group, __m512 excess, __mmask16 cols, float* sums, size_t ld) {
  __m512 total[kRows];
#pragma GCC unroll 8
  for (size_t r = 0; r < kRows; ++r) total[r] = _mm512_setzero_ps();
  const size_t steps = kp / 4, group_steps = group / 4;
  for (size_t s0 = 0, g = 0; s0 < steps; s0 += group_steps, ++g) {
    const size_t s1 = s0 + group_steps < steps ? s0 + group_steps : steps;
    __m512i acc[kRows];
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_si512();
    for (size_t s = s0; s < s1; ++s) {
      const __m512i wv = _mm512_load_si512(panel + s * 64);
#pragma GCC unroll 8
      for (size_t r = 0; r < kRows; ++r) {
        const __m512i four = _mm512_broadcastd_epi32(_mm_loadu_si32(xf + r * kp + s * 4));
        acc[r] = _mm512_dpbusd_epi32(acc[r], four, wv);
      }
    }
    const __m512 scale = _mm512_load_ps(panel_scales + g * 16);
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) {
      total[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r]), scale, total[r]);
    }
  }
#pragma GCC unroll 8
  for (size_t r = 0; r < kRows; ++r) {
    _mm512_mask_storeu_ps(sums + r * ld, cols, _mm512_sub_ps(total[r], excess));
  }
}

// panel_tile for `rows` (1 .. kMaxRows) rows.
template <size_t kMaxRows = 8>
void panel_rows(size_t rows, const uint8_t* xf, size_t kp, const int8_t* panel,
                const float* panel_scales, size_t group, __m512 excess, __mmask16 cols, float* sums,
                size_t ld) {
  if constexpr (kMaxRows > 1) {
    if (rows < kMaxRows) {
      return panel_rows<kMaxRows - 1>(rows, xf, kp, panel, panel_scales, group, excess, cols, sums,
                                      ld);
    }
  }
  panel_tile<kMaxRows>(xf, kp, panel, panel_scales, group, excess, cols, sums, ld);
}

}  // namespace

void int4_panel_rows_avx512vnni(const uint8_t* xf, size_t m, const Int4Weights& w, size_t n0,
                                size_t n1, int8_t* panel, float* panel_scales, float* sums,
                                size_t ld) {
  const size_t chunks = w.chunks_per_row(), kp = w.padded_k(), row_bytes = chunks * 64;
  const size_t groups = (kp + w.group - 1) / w.group;
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i nibble = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
  for (size_t n = n0; n < n1; n += 16) {
    const size_t width = n1 - n < 16 ? n1 - n : 16;
    const auto cols = static_cast<__mmask16>((1u << width) - 1u);
    // Repack: dword i of chunk c of the 16 columns holds, in its low nibbles, values
    // 128c + 4i .. + 3 (step 32c + i) and in its high ones 128c + 64 + 4i .. (step
    // 32c + 16 + i). Columns past n1 read as stored 8 (value 0).
    const __m512i offsets =
        _mm512_mullo_epi32(lanes, _mm512_set1_epi32(static_cast<int>(row_bytes)));
    const uint8_t* base = w.packed.data() + n * row_bytes;
    for (size_t c = 0; c < chunks; ++c) {
      for (size_t i = 0; i < 16; ++i) {
        const __m512i at =
            _mm512_add_epi32(offsets, _mm512_set1_epi32(static_cast<int>(c * 64 + 4 * i)));
        const __m512i g = _mm512_mask_i32gather_epi32(_mm512_set1_epi8(static_cast<char>(0x88)),
                                                      cols, at, base, 1);
        const __m512i lo = _mm512_sub_epi8(_mm512_and_si512(g, nibble), eight);
        const __m512i hi =
            _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(g, 4), nibble), eight);
        _mm512_store_si512(panel + (32 * c + i) * 64, lo);
        _mm512_store_si512(panel + (32 * c + 16 + i) * 64, hi);
      }
    }
    const __m512i scale_at =
        _mm512_mullo_epi32(lanes, _mm512_set1_epi32(static_cast<int>(w.scale_stride)));
    const float* scale_base = w.scales.data() + n * w.scale_stride;
    for (size_t g = 0; g < groups; ++g) {
      const __m512 sc = _mm512_mask_i32gather_ps(
          _mm512_setzero_ps(), cols,
          _mm512_add_epi32(scale_at, _mm512_set1_epi32(static_cast<int>(g))), scale_base, 4);
      _mm512_store_ps(panel_scales + g * 16, sc);
    }
    // Each sum carries 128 * sum_g scale * sum w beyond sum x * w (x + 128 above).
    const __m512 excess = _mm512_mul_ps(_mm512_set1_ps(128.0f),
                                        _mm512_maskz_loadu_ps(cols, w.scaled_sums.data() + n));
    // Tiles of at most 8 rows, as even as they go (34 rows: 7, 7, 7, 7, 6): a short
    // last tile would leave the product's latency exposed.
    const size_t tiles = (m + 7) / 8;
    for (size_t t = 0, r = 0; t < tiles; ++t) {
      const size_t height = m / tiles + (t < m % tiles ? 1 : 0);
      panel_rows(height, xf + r * kp, kp, panel, panel_scales, w.group, excess, cols,
                 sums + r * ld + (n - n0), ld);
      r += height;
    }
  }
}

void int4_rows_avx512vnni(const int8_t* x, const int32_t* corr, size_t rows, const Int4Weights& w,
                          size_t n0, size_t n1, float* sums, size_t ld) {
  if (w.group == 32) return rows512<Groups::k32>(x, corr, rows, w, n0, n1, sums, ld);
  if (w.group == 64) return rows512<Groups::k64>(x, corr, rows, w, n0, n1, sums, ld);
  if (w.group % 128 == 0) return rows512<Groups::kChunk>(x, corr, rows, w, n0, n1, sums, ld);
  rows512<Groups::kOther>(x, corr, rows, w, n0, n1, sums, ld);
}

}  // namespace et::kernels::detail
