#include "kernels/int4_gemm.h"

#if ET_CPU_X86
#include <cpuinfo.h>
#endif

#include <algorithm>
#include <cstring>

#include "kernels/cpu_isa.h"
#include "runtime/thread_pool.h"

namespace et::kernels {
namespace {

// The stored nibble (value + 8) of weight (row, i).
uint8_t stored(const Int4Weights& w, size_t row, size_t i) {
  const uint8_t byte = w.block_bytes(row, i / 32)[i % 32];
  return (i / 32) % 2 == 0 ? byte & 0x0F : byte >> 4;
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

// Rows [r0, r0 + rows) of y, columns [n0, n1): the scaled sums of (x + 128) * v less
// the correction sum_g scale * (128 + zp) * sum_k v (so each group adds
// sum_k (x - zp) * v), times the row's scale, plus the bias.
void gemm_tile(detail::Int4RowsFn fn, const int8_t* x, size_t r0, size_t rows,
               std::span<const RowQuantization> quant, const Int4Weights& w, const float* bias,
               size_t n0, size_t n1, float* y, std::vector<float>& sums) {
  const size_t width = n1 - n0;
  sums.resize(rows * width);
  fn(x + r0 * w.k, rows, w, n0, n1, sums.data(), width);
  for (size_t r = 0; r < rows; ++r) {
    const RowQuantization q = quant[r0 + r];
    const auto offset = static_cast<float>(128 + q.zero_point);
    float* out = y + (r0 + r) * w.n;
    const float* s = sums.data() + r * width;
    for (size_t n = n0; n < n1; ++n) {
      out[n] =
          (s[n - n0] - offset * w.scaled_sums[n]) * q.scale + (bias != nullptr ? bias[n] : 0.0f);
    }
  }
}

}  // namespace

bool int4_gemm_fits(size_t k, size_t group) {
  // A group's integer sum stays inside int32: |(x + 128) * w| <= 255 * 8 per product.
  return k > 0 && k % 2 == 0 && group > 0 && group <= kMaxInt4Group && k % group == 0;
}

Int4Weights pack_int4_weights(const uint8_t* qbint4, size_t n, size_t k, size_t group,
                              std::span<const float> scales) {
  Int4Weights w;
  w.n = n;
  w.k = k;
  w.group = group;
  w.packed.assign(n * w.pairs_per_row() * 32, 0x88);  // padding: stored 8 is value 0
  w.scales.assign(scales.begin(), scales.end());
  std::vector<int32_t> sums(n * w.groups_per_row(), 0);
  for (size_t row = 0; row < n; ++row) {
    for (size_t i = 0; i < k; ++i) {
      const uint8_t byte = qbint4[(row * k + i) / 2];
      const uint8_t v = i % 2 == 0 ? byte & 0x0F : byte >> 4;
      uint8_t& dst = w.packed[(row * w.pairs_per_row() + i / 64) * 32 + i % 32];
      dst = (i / 32) % 2 == 0 ? static_cast<uint8_t>((dst & 0xF0) | v)
                              : static_cast<uint8_t>((dst & 0x0F) | (v << 4));
      sums[row * w.groups_per_row() + i / group] += static_cast<int32_t>(v) - 8;
    }
  }
  w.scaled_sums.assign(n, 0.0f);
  for (size_t row = 0; row < n; ++row) {
    for (size_t g = 0; g < w.groups_per_row(); ++g) {
      const size_t at = row * w.groups_per_row() + g;
      w.scaled_sums[row] += static_cast<float>(sums[at]) * w.scales[at];
    }
  }
  return w;
}

void int4_gemm(size_t m, const int8_t* x, std::span<const RowQuantization> rows,
               const Int4Weights& w, const float* bias, float* y) {
  detail::int4_gemm_with(selected_rows(w), m, x, rows, w, bias, y);
}

namespace detail {

void int4_gemm_with(Int4RowsFn fn, size_t m, const int8_t* x, std::span<const RowQuantization> rows,
                    const Int4Weights& w, const float* bias, float* y) {
  if (w.group % 32 != 0) fn = int4_rows_portable;  // the vector paths take whole blocks
  // Work in tiles of up to kTileRows rows x kChunk columns, so each tile's sums fit a
  // small buffer and threads share the work even for one row (a decode step).
  constexpr size_t kChunk = 64;
  const size_t chunks = (w.n + kChunk - 1) / kChunk;
  const size_t tiles = (m + kTileRows - 1) / kTileRows;
  auto run = [&](size_t t0, size_t t1) {
    std::vector<float> sums;
    for (size_t t = t0; t < t1; ++t) {
      const size_t c = t % chunks, r0 = t / chunks * kTileRows;
      const size_t n0 = c * kChunk, n1 = std::min(w.n, n0 + kChunk);
      gemm_tile(fn, x, r0, std::min(kTileRows, m - r0), rows, w, bias, n0, n1, y, sums);
    }
  };
  if (m * w.n * w.k < (size_t{1} << 17) || tiles * chunks < 2) {
    run(0, tiles * chunks);
    return;
  }
  ThreadPool::global().parallel_for(tiles * chunks, 1, run);
}

void int4_rows_portable(const int8_t* x, size_t rows, const Int4Weights& w, size_t n0, size_t n1,
                        float* sums, size_t ld) {
  const size_t groups = w.groups_per_row();
  for (size_t r = 0; r < rows; ++r) {
    const int8_t* xr = x + r * w.k;
    for (size_t n = n0; n < n1; ++n) {
      float total = 0;
      for (size_t g = 0; g < groups; ++g) {
        int32_t s = 0;
        for (size_t i = g * w.group; i < (g + 1) * w.group; ++i) {
          s += (static_cast<int32_t>(xr[i]) + 128) * (static_cast<int32_t>(stored(w, n, i)) - 8);
        }
        total += static_cast<float>(s) * w.scales[n * groups + g];
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
void int4_rows_avx2(const int8_t* x, size_t rows, const Int4Weights& w, size_t n0, size_t n1,
                    float* sums, size_t ld) {
  int4_rows_portable(x, rows, w, n0, n1, sums, ld);
}
void int4_rows_avx512vnni(const int8_t* x, size_t rows, const Int4Weights& w, size_t n0, size_t n1,
                          float* sums, size_t ld) {
  int4_rows_portable(x, rows, w, n0, n1, sums, ld);
}
#endif

}  // namespace detail
}  // namespace et::kernels
