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
  const uint8_t byte = w.packed[(row * w.blocks_per_row() + i / 32) * 16 + i % 16];
  return i % 32 < 16 ? byte & 0x0F : byte >> 4;
}

bool has_vnni() {
#if ET_CPU_X86
  return cpuinfo_initialize() && cpuinfo_has_x86_avx512vnni() && cpuinfo_has_x86_avx512vl() &&
         cpuinfo_has_x86_avx512bw();
#else
  return false;
#endif
}

detail::Int4DotFn selected_dots(const Int4Weights& w) {
  if (w.group % 32 != 0) return detail::int4_dots_portable;
  switch (selected_isa()) {
    case CpuIsa::kAvx512:
      if (has_vnni()) return detail::int4_dots_avx512vnni;
      return detail::int4_dots_avx2;
    case CpuIsa::kAvx2:
      return detail::int4_dots_avx2;
    case CpuIsa::kPortable:
      break;
  }
  return detail::int4_dots_portable;
}

// Rows [n0, n1) of y for one row of x.
void gemm_row(detail::Int4DotFn dots_fn, const int8_t* x, RowQuantization q, const Int4Weights& w,
              const float* bias, size_t n0, size_t n1, float* y, int32_t* dots) {
  const size_t groups = w.groups_per_row();
  // sum_k (x - zp) * v = sum_k x * (v + 8) - 8 * sum_k x - zp * sum_k v, per group.
  int32_t x_sums[256];
  std::vector<int32_t> large;
  int32_t* xs = x_sums;
  if (groups > 256) {
    large.resize(groups);
    xs = large.data();
  }
  for (size_t g = 0; g < groups; ++g) {
    int32_t s = 0;
    for (size_t i = g * w.group; i < (g + 1) * w.group; ++i) s += x[i];
    xs[g] = s;
  }
  dots_fn(x, w, n0, n1, dots);
  for (size_t n = n0; n < n1; ++n) {
    const int32_t* d = dots + (n - n0) * groups;
    const float* scale = w.scales.data() + n * groups;
    const int32_t* wsum = w.sums.data() + n * groups;
    float total = 0;
    for (size_t g = 0; g < groups; ++g) {
      const int32_t exact = d[g] - 8 * xs[g] - q.zero_point * wsum[g];
      total += static_cast<float>(exact) * scale[g];
    }
    y[n] = total * q.scale + (bias != nullptr ? bias[n] : 0.0f);
  }
}

}  // namespace

bool int4_gemm_fits(size_t k, size_t group) {
  return k > 0 && k % 2 == 0 && group > 0 && k % group == 0;
}

Int4Weights pack_int4_weights(const uint8_t* qbint4, size_t n, size_t k, size_t group,
                              std::span<const float> scales) {
  Int4Weights w;
  w.n = n;
  w.k = k;
  w.group = group;
  const size_t blocks = w.blocks_per_row();
  w.packed.assign(n * blocks * 16, 0x88);  // padding: stored 8 is value 0
  w.scales.assign(scales.begin(), scales.end());
  w.sums.assign(n * w.groups_per_row(), 0);
  for (size_t row = 0; row < n; ++row) {
    for (size_t i = 0; i < k; ++i) {
      const uint8_t byte = qbint4[(row * k + i) / 2];
      const uint8_t v = i % 2 == 0 ? byte & 0x0F : byte >> 4;
      uint8_t& dst = w.packed[(row * blocks + i / 32) * 16 + i % 16];
      dst = i % 32 < 16 ? static_cast<uint8_t>((dst & 0xF0) | v)
                        : static_cast<uint8_t>((dst & 0x0F) | (v << 4));
      w.sums[row * w.groups_per_row() + i / group] += static_cast<int32_t>(v) - 8;
    }
  }
  return w;
}

void int4_gemm(size_t m, const int8_t* x, std::span<const RowQuantization> rows,
               const Int4Weights& w, const float* bias, float* y) {
  const detail::Int4DotFn dots_fn = selected_dots(w);
  const size_t groups = w.groups_per_row();
  // Columns in chunks, so each chunk's dots fit a small buffer and threads share work
  // even for one row (a decode step).
  constexpr size_t kChunk = 64;
  const size_t chunks = (w.n + kChunk - 1) / kChunk;
  auto run = [&](size_t c0, size_t c1) {
    std::vector<int32_t> dots(kChunk * groups);
    for (size_t c = c0; c < c1; ++c) {
      const size_t n0 = c * kChunk, n1 = std::min(w.n, n0 + kChunk);
      for (size_t r = 0; r < m; ++r) {
        gemm_row(dots_fn, x + r * w.k, rows[r], w, bias, n0, n1, y + r * w.n, dots.data());
      }
    }
  };
  if (m * w.n * w.k < (size_t{1} << 18) || chunks < 2) {
    run(0, chunks);
    return;
  }
  ThreadPool::global().parallel_for(chunks, 1, run);
}

namespace detail {

void int4_dots_portable(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1,
                        int32_t* dots) {
  const size_t groups = w.groups_per_row();
  for (size_t n = n0; n < n1; ++n) {
    for (size_t g = 0; g < groups; ++g) {
      int32_t s = 0;
      for (size_t i = g * w.group; i < (g + 1) * w.group; ++i) {
        s += static_cast<int32_t>(x[i]) * stored(w, n, i);
      }
      dots[(n - n0) * groups + g] = s;
    }
  }
}

std::vector<std::pair<const char*, Int4DotFn>> available_int4_dots() {
  std::vector<std::pair<const char*, Int4DotFn>> out{{"portable", int4_dots_portable}};
  for (CpuIsa isa : available_isas()) {
    if (isa == CpuIsa::kAvx2) out.emplace_back("avx2", int4_dots_avx2);
  }
  if (has_vnni()) out.emplace_back("avx512vnni", int4_dots_avx512vnni);
  return out;
}

#if !ET_CPU_X86
void int4_dots_avx2(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1, int32_t* dots) {
  int4_dots_portable(x, w, n0, n1, dots);
}
void int4_dots_avx512vnni(const int8_t* x, const Int4Weights& w, size_t n0, size_t n1,
                          int32_t* dots) {
  int4_dots_portable(x, w, n0, n1, dots);
}
#endif

}  // namespace detail
}  // namespace et::kernels
