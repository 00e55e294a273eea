#include "kernels/math/int4_gemm.h"

#if ET_CPU_X86
#include <cpuinfo.h>
#endif

#include <algorithm>
#include <cstring>

#include "kernels/math/cpu_isa.h"
#include "runtime/core/thread_pool.h"

namespace et::kernels {
namespace {

// The stored nibble (value + 8) of weight (row, i).
uint8_t stored(const Int4Weights& w, size_t row, size_t i) {
  const size_t b = i / 32;
  const uint8_t byte = w.block_bytes(row, b)[i % 32];
  return Int4Weights::block_in_high_nibbles(b) ? byte >> 4 : byte & 0x0F;
}

bool has_vnni() {
#if ET_CPU_X86
  return cpuinfo_initialize() && cpuinfo_has_x86_avx512vnni() && cpuinfo_has_x86_avx512vl() &&
         cpuinfo_has_x86_avx512dq() && cpuinfo_has_x86_avx512bw();
#else
  return false;
#endif
}

detail::Int4RowsFn selected_rows(const Int4Weights& w) {
  if (w.group % 32 != 0) return detail::int4_rows_portable;
  switch (selected_isa()) {
    case CpuIsa::kAvx512:
      return has_vnni() ? detail::int4_rows_avx512vnni : detail::int4_rows_avx2;
    case CpuIsa::kAvx2:
      return detail::int4_rows_avx2;
    case CpuIsa::kPortable:
      break;
  }
  return detail::int4_rows_portable;
}

// Rows [r0, r0 + rows) of y, columns [n0, n1): the scaled sums of x * w less the
// zero point's share, sum_g scale * zp * sum_k w, times the row's scale, plus the bias.
// y's rows [r0, r0 + rows), columns [n0, n1), from the kernels' sums (ld apart, from
// column n0): less the zero point's share, times the row's scale, plus the bias.
void finish_rows(const float* sums, size_t ld, size_t r0, size_t rows,
                 std::span<const RowQuantization> quant, const Int4Weights& w, const float* bias,
                 size_t n0, size_t n1, float* y) {
  for (size_t r = 0; r < rows; ++r) {
    const RowQuantization q = quant[r0 + r];
    const auto offset = static_cast<float>(q.zero_point);
    float* out = y + (r0 + r) * w.n;
    const float* s = sums + r * ld;
    for (size_t n = n0; n < n1; ++n) {
      out[n] =
          (s[n - n0] - offset * w.scaled_sums[n]) * q.scale + (bias != nullptr ? bias[n] : 0.0f);
    }
  }
}

void gemm_tile(detail::Int4RowsFn fn, const int8_t* x, const int32_t* corr, size_t r0, size_t rows,
               std::span<const RowQuantization> quant, const Int4Weights& w, const float* bias,
               size_t n0, size_t n1, float* y, std::vector<float>& sums) {
  const size_t width = n1 - n0, kp = w.padded_k();
  sums.resize(rows * width);
  fn(x + r0 * kp, rows == 1 ? corr : nullptr, rows, w, n0, n1, sums.data(), width);
  finish_rows(sums.data(), width, r0, rows, quant, w, bias, n0, n1, y);
}

// One row of stored nibbles (qbint4: value 2i in the low nibble of byte i, 2i + 1 in
// the high one) into the chunk layout; REQUIRES: k even. Whole chunks pair source
// bytes (128c + p) / 2 and (128c + 64 + p) / 2, two output bytes per pair.
void pack_row(const uint8_t* src, size_t k, uint8_t* dst) {
  const size_t whole = k / 128;
  for (size_t c = 0; c < whole; ++c) {
    const uint8_t* lo = src + c * 64;
    const uint8_t* hi = lo + 32;
    uint8_t* out = dst + c * 64;
    for (size_t p = 0; p < 32; ++p) {
      out[2 * p] = static_cast<uint8_t>((lo[p] & 0x0F) | (hi[p] << 4));
      out[2 * p + 1] = static_cast<uint8_t>((lo[p] >> 4) | (hi[p] & 0xF0));
    }
  }
  uint8_t* tail = dst + whole * 64;
  std::memset(tail, 0x88, k % 128 == 0 ? 0 : 64);  // padding: stored 8 is value 0
  for (size_t i = whole * 128; i < k; ++i) {
    const uint8_t v = (src[i / 2] >> (4 * (i % 2))) & 0x0F;
    uint8_t& byte = tail[i % 64];
    byte = (i % 128) < 64 ? static_cast<uint8_t>((byte & 0xF0) | v)
                          : static_cast<uint8_t>((byte & 0x0F) | (v << 4));
  }
}

}  // namespace

bool int4_gemm_fits(size_t k, size_t group) {
  // A group's integer sums stay inside int32: the vector paths' products of x and the
  // stored weight, |x * (w + 8)| <= 128 * 15, and their corrections, 128 * 8.
  return k > 0 && k % 2 == 0 && group > 0 && group <= kMaxInt4Group && k % group == 0;
}

Int4Weights pack_int4_weights(const uint8_t* qbint4, size_t n, size_t k, size_t group,
                              std::span<const float> scales) {
  Int4Weights w;
  w.n = n;
  w.k = k;
  w.group = group;
  const size_t groups = w.groups_per_row(), chunk_bytes = w.chunks_per_row() * 64;
  w.packed.resize(n * chunk_bytes);
  // Enough groups a row to cover the padding's blocks, whatever the group.
  w.scale_stride = std::max(groups, (w.padded_k() + group - 1) / group);
  w.scales.assign(n * w.scale_stride, 0.0f);
  w.scaled_sums.assign(n, 0.0f);
  for (size_t row = 0; row < n; ++row) {
    const uint8_t* src = qbint4 + row * (k / 2);
    pack_row(src, k, w.packed.data() + row * chunk_bytes);
    for (size_t g = 0; g < groups; ++g) {
      int32_t sum = 0;
      for (size_t i = g * group; i < (g + 1) * group; ++i) {
        sum += static_cast<int32_t>((src[i / 2] >> (4 * (i % 2))) & 0x0F) - 8;
      }
      const float scale = scales[row * groups + g];
      w.scales[row * w.scale_stride + g] = scale;
      w.scaled_sums[row] += static_cast<float>(sum) * scale;
    }
  }
  return w;
}

void int4_gemm(size_t m, const int8_t* x, std::span<const RowQuantization> rows,
               const Int4Weights& w, const float* bias, float* y) {
  detail::int4_gemm_with(selected_rows(w), m, x, rows, w, bias, y);
}

namespace detail {

void prepare_int4_activations(size_t m, const int8_t* x, const Int4Weights& w,
                              std::vector<int8_t>& xp, std::vector<int32_t>& corr) {
  const size_t k = w.k, kp = w.padded_k();
  xp.assign(m * kp, 0);
  for (size_t r = 0; r < m; ++r) std::memmove(xp.data() + r * kp, x + r * k, k);
  corr.clear();
  if (m % kTileRows != 1) return;
  corr.resize(kp / 4);
  const int8_t* row = xp.data() + (m - 1) * kp;
  for (size_t j = 0; j < kp / 4; ++j) {
    corr[j] = -8 * (row[4 * j] + row[4 * j + 1] + row[4 * j + 2] + row[4 * j + 3]);
  }
}

#if ET_CPU_X86
namespace {

// `count` T from a 64-byte boundary within `buffer` (resized to hold them).
template <typename T>
T* aligned_part(std::vector<uint8_t>& buffer, size_t count) {
  buffer.resize(count * sizeof(T) + 64);
  const auto at = reinterpret_cast<uintptr_t>(buffer.data());
  return reinterpret_cast<T*>(buffer.data() + ((64 - at % 64) % 64));
}

// Several rows on AVX-512 VNNI: the columns in chunks of 64 shared among the threads,
// each chunk's weights repacked once (16 columns at a time) and run against every row.
void gemm_panels(size_t m, const std::vector<int8_t>& xp, std::span<const RowQuantization> quant,
                 const Int4Weights& w, const float* bias, float* y) {
  const size_t kp = w.padded_k(), groups = (kp + w.group - 1) / w.group;
  std::vector<uint8_t> xf(xp.size());
  for (size_t i = 0; i < xp.size(); ++i) xf[i] = static_cast<uint8_t>(xp[i] ^ 0x80);  // x + 128
  constexpr size_t kChunk = 64;
  const size_t chunks = (w.n + kChunk - 1) / kChunk;
  auto run = [&](size_t c0, size_t c1) {
    std::vector<uint8_t> panel_buffer, scale_buffer;
    int8_t* panel = aligned_part<int8_t>(panel_buffer, 16 * kp);
    float* panel_scales = aligned_part<float>(scale_buffer, 16 * groups);
    std::vector<float> sums(m * kChunk);
    for (size_t c = c0; c < c1; ++c) {
      const size_t n0 = c * kChunk, n1 = std::min(w.n, n0 + kChunk);
      int4_panel_rows_avx512vnni(xf.data(), m, w, n0, n1, panel, panel_scales, sums.data(), kChunk);
      finish_rows(sums.data(), kChunk, 0, m, quant, w, bias, n0, n1, y);
    }
  };
  if (m * w.n * w.k < (size_t{1} << 17) || chunks < 2) return run(0, chunks);
  ThreadPool::global().parallel_for(chunks, 1, run);
}

}  // namespace
#endif

void int4_gemm_with(Int4RowsFn fn, size_t m, const int8_t* x, std::span<const RowQuantization> rows,
                    const Int4Weights& w, const float* bias, float* y) {
  if (w.group % 32 != 0) fn = int4_rows_portable;  // the vector paths take whole blocks
  std::vector<int8_t> xp;
  std::vector<int32_t> corr;
  prepare_int4_activations(m, x, w, xp, corr);
#if ET_CPU_X86
  if (fn == int4_rows_avx512vnni && m >= 2) return gemm_panels(m, xp, rows, w, bias, y);
#endif
  // Work in tiles of up to kTileRows rows x kChunk columns, so each tile's sums fit a
  // small buffer and threads share the work even for one row (a decode step). Tiles
  // are numbered rows first: a thread's range of them covers whole column chunks, so
  // each chunk's weights are read from memory once, by one thread, and stay in its
  // caches while every row tile (a prefill's) uses them.
  constexpr size_t kChunk = 64;
  const size_t chunks = (w.n + kChunk - 1) / kChunk;
  const size_t tiles = (m + kTileRows - 1) / kTileRows;
  auto run = [&](size_t t0, size_t t1) {
    std::vector<float> sums;
    for (size_t t = t0; t < t1; ++t) {
      const size_t c = t / tiles, r0 = t % tiles * kTileRows;
      const size_t n0 = c * kChunk, n1 = std::min(w.n, n0 + kChunk);
      gemm_tile(fn, xp.data(), corr.data(), r0, std::min(kTileRows, m - r0), rows, w, bias, n0, n1,
                y, sums);
    }
  };
  if (m * w.n * w.k < (size_t{1} << 17) || tiles * chunks < 2) {
    run(0, tiles * chunks);
    return;
  }
  ThreadPool::global().parallel_for(tiles * chunks, 1, run);
}

void int4_rows_portable(const int8_t* x, const int32_t* /*corr*/, size_t rows, const Int4Weights& w,
                        size_t n0, size_t n1, float* sums, size_t ld) {
  const size_t groups = w.groups_per_row();
  for (size_t r = 0; r < rows; ++r) {
    const int8_t* xr = x + r * w.padded_k();
    for (size_t n = n0; n < n1; ++n) {
      float total = 0;
      for (size_t g = 0; g < groups; ++g) {
        int32_t s = 0;
        for (size_t i = g * w.group; i < (g + 1) * w.group; ++i) {
          s += static_cast<int32_t>(xr[i]) * (static_cast<int32_t>(stored(w, n, i)) - 8);
        }
        total += static_cast<float>(s) * w.scale(n, g);
      }
      sums[r * ld + (n - n0)] = total;
    }
  }
}

std::vector<std::pair<const char*, Int4RowsFn>> available_int4_rows() {
  std::vector<std::pair<const char*, Int4RowsFn>> out{{"portable", int4_rows_portable}};
  for (CpuIsa isa : available_isas()) {
    if (isa == CpuIsa::kAvx2) out.emplace_back("avx2", int4_rows_avx2);
  }
  if (has_vnni()) out.emplace_back("avx512vnni", int4_rows_avx512vnni);
  return out;
}

#if !ET_CPU_X86
void int4_rows_avx2(const int8_t* x, const int32_t* corr, size_t rows, const Int4Weights& w,
                    size_t n0, size_t n1, float* sums, size_t ld) {
  int4_rows_portable(x, corr, rows, w, n0, n1, sums, ld);
}
void int4_rows_avx512vnni(const int8_t* x, const int32_t* corr, size_t rows, const Int4Weights& w,
                          size_t n0, size_t n1, float* sums, size_t ld) {
  int4_rows_portable(x, corr, rows, w, n0, n1, sums, ld);
}
#endif

}  // namespace detail
}  // namespace et::kernels
