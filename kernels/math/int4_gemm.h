// Dynamically quantized int8 activations times blockwise int4 weights (ExecuTorch's
// "8da4w" linear layers, XNNPACK's qd8 x qb4w fully connected):
//
//   y[m][n] = x_scale[m] * sum_g w_scale[n][g] * sum_{k in group g} (x[m][k] - x_zp[m]) * w[n][k]
//             + bias[n]
//
// w holds int4 values in [-8, 7], one float scale per group of `group` consecutive k.
// The weights are packed once (pack_int4_weights) and shared read-only by every caller;
// the product uses the CPU's int8 dot-product instructions (AVX-512 VNNI, else AVX2's
// multiply-add of bytes) when it has them, and portable C++ otherwise. Each group's
// integer sum is exact; groups are summed in float, so the result differs from a float
// reference (and between paths) only by float rounding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace et::kernels {

struct Int4Weights {
  size_t n = 0, k = 0, group = 0;
  // Row-major [n][chunks_per_row()][64] bytes. A chunk holds 128 values, each stored
  // plus 8 (0 .. 15): byte j of chunk c holds value 128c + j in its low nibble and
  // 128c + 64 + j in its high one, so a 64-byte vector's low nibbles are 64 consecutive
  // values and its high nibbles the next 64. Rows whose k is not a multiple of 128 pad
  // with 8 (zero).
  std::vector<uint8_t> packed;
  // [n][scale_stride]: one float per group, zero past the row's last group (the
  // padding's groups, so vector paths may read them).
  std::vector<float> scales;
  size_t scale_stride = 0;
  std::vector<float> scaled_sums;  // [n]: sum over groups of scale * the group's values
  size_t chunks_per_row() const { return (k + 127) / 128; }
  size_t padded_k() const { return chunks_per_row() * 128; }
  // The 32 bytes holding block b (values 32b .. 32b + 31) of weight row `row`: bytes
  // 0-31 of its chunk for b % 4 of 0 or 2, 32-63 for 1 or 3; the low nibbles for b % 4
  // of 0 or 1, the high ones for 2 or 3.
  const uint8_t* block_bytes(size_t row, size_t b) const {
    return packed.data() + (row * chunks_per_row() + b / 4) * 64 + (b % 2) * 32;
  }
  static bool block_in_high_nibbles(size_t b) { return b % 4 >= 2; }
  float scale(size_t row, size_t g) const { return scales[row * scale_stride + g]; }
  size_t groups_per_row() const { return k / group; }
};

// Packs XNNPACK's qbint4 layout: [n][k] int4 values two to a byte (value 2i in the
// low nibble of byte i, 2i + 1 in the high one), each stored plus 8 (its zero point).
// `scales` has n * (k / group) entries, row-major. REQUIRES: int4_gemm_fits(k, group).
Int4Weights pack_int4_weights(const uint8_t* qbint4, size_t n, size_t k, size_t group,
                              std::span<const float> scales);

// The largest group: its integer sums cannot overflow 32 bits.
inline constexpr size_t kMaxInt4Group = size_t{1} << 16;

// Whether pack_int4_weights and int4_gemm take this shape: k even and a group size of
// at most kMaxInt4Group dividing it. Groups of a multiple of 32 use the vector paths;
// others the portable one.
bool int4_gemm_fits(size_t k, size_t group);

// The row quantization of an int8 activation (real = (q - zero_point) * scale).
struct RowQuantization {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// y[m][n] as above; x is [m][k] int8 row-major, y [m][n]; bias may be null. Splits the
// work across the process's threads when it is large.
void int4_gemm(size_t m, const int8_t* x, std::span<const RowQuantization> rows,
               const Int4Weights& w, const float* bias, float* y);

namespace detail {
// Rows [0, rows) (at most kTileRows) of the activations against weight rows [n0, n1):
// sums[r * ld + (n - n0)] = sum_g scale[n][g] * sum_{k in g} x[r][k] * w[n][k].
// x rows are w.padded_k() bytes apart, zero past k. When rows is 1, corr holds that
// row's w.padded_k() / 4 corrections, corr[j] = -8 * (x[4j] + ... + x[4j + 3]): what
// AVX-512's one-row path starts each four-byte lane of a product at, so that
// multiplying the stored weights (w + 8, unsigned bytes) by x yields sum x * w. Calls
// of several rows, and the other paths, do not read it (it may be null then).
constexpr size_t kTileRows = 4;
using Int4RowsFn = void (*)(const int8_t* x, const int32_t* corr, size_t rows, const Int4Weights& w,
                            size_t n0, size_t n1, float* sums, size_t ld);
void int4_rows_portable(const int8_t* x, const int32_t* corr, size_t rows, const Int4Weights& w,
                        size_t n0, size_t n1, float* sums, size_t ld);
void int4_rows_avx2(const int8_t* x, const int32_t* corr, size_t rows, const Int4Weights& w,
                    size_t n0, size_t n1, float* sums, size_t ld);
void int4_rows_avx512vnni(const int8_t* x, const int32_t* corr, size_t rows, const Int4Weights& w,
                          size_t n0, size_t n1, float* sums, size_t ld);
// Rows of a prefill with AVX-512 VNNI: all m rows of xf (x + 128 as unsigned bytes, rows
// w.padded_k() apart, 128 past k) against weight rows [n0, n1), 16 at a time repacked
// into `panel` (16 * w.padded_k() bytes, 64-byte aligned) and their group scales into
// `panel_scales` (16 floats a group of the padded row, 64-byte aligned):
// sums[r * ld + (n - n0)] as for Int4RowsFn.
void int4_panel_rows_avx512vnni(const uint8_t* xf, size_t m, const Int4Weights& w, size_t n0,
                                size_t n1, int8_t* panel, float* panel_scales, float* sums,
                                size_t ld);
// The implementations this CPU runs (portable first); int4_gemm uses the last that
// ET_CPU_ISA allows. Tests call each.
std::vector<std::pair<const char*, Int4RowsFn>> available_int4_rows();
// int4_gemm with the given implementation.
void int4_gemm_with(Int4RowsFn fn, size_t m, const int8_t* x, std::span<const RowQuantization> rows,
                    const Int4Weights& w, const float* bias, float* y);
// The activations as the kernels take them: x rows padded with zeros to w.padded_k()
// (into xp), and the corrections of the one row that int4_gemm runs alone (the last,
// when m % kTileRows is 1) into corr; else corr is left empty.
void prepare_int4_activations(size_t m, const int8_t* x, const Int4Weights& w,
                              std::vector<int8_t>& xp, std::vector<int32_t>& corr);
}  // namespace detail

}  // namespace et::kernels
