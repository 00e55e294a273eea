#include "kernels/math/packed_sgemm.h"

#include <algorithm>
#include <new>

#include "kernels/math/sgemm_packed_call.h"
#include "runtime/core/thread_pool.h"

namespace et::kernels {
namespace detail {

PackedKernel packed_kernel_portable();
#if ET_CPU_X86
PackedKernel packed_kernel_avx2();
PackedKernel packed_kernel_avx512();
#endif

}  // namespace detail

namespace {

detail::PackedKernel kernel_for(CpuIsa isa) {
  switch (isa) {
#if ET_CPU_X86
    case CpuIsa::kAvx512:
      return detail::packed_kernel_avx512();
    case CpuIsa::kAvx2:
      return detail::packed_kernel_avx2();
#endif
    default:
      return detail::packed_kernel_portable();
  }
}

}  // namespace

PackedWeights pack_weights(const float* w, int64_t n, int64_t k, bool w_is_k_by_n, CpuIsa isa) {
  const detail::PackedKernel kernel = kernel_for(isa);
  PackedWeights packed;
  packed.n = n;
  packed.k = k;
  packed.isa = isa;
  packed.panel_width = kernel.nr;
  const size_t bytes = (packed.bytes() + 63) / 64 * 64;
  packed.panels.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!packed.panels) throw std::bad_alloc();
  const int64_t nr = kernel.nr;
  // Blocks of kBlock depths: each column's run of them is read at once, and the
  // block's kBlock x nr destination stays in L1 while it is filled.
  constexpr int64_t kBlock = 64;
  for (int64_t q = 0; q < packed.panel_count(); ++q) {
    float* panel = packed.panels.get() + q * k * nr;
    const int64_t j0 = q * nr, width = std::min(nr, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kBlock) {
      const int64_t p1 = std::min(k, p0 + kBlock);
      for (int64_t j = 0; j < nr; ++j) {
        if (j >= width) {
          for (int64_t p = p0; p < p1; ++p) panel[p * nr + j] = 0.0f;
        } else if (w_is_k_by_n) {
          for (int64_t p = p0; p < p1; ++p) panel[p * nr + j] = w[p * n + j0 + j];
        } else {
          const float* column = w + (j0 + j) * k;
          for (int64_t p = p0; p < p1; ++p) panel[p * nr + j] = column[p];
        }
      }
    }
  }
  return packed;
}

void packed_sgemm(int64_t m, const float* x, int64_t ldx, const PackedWeights& w, const float* bias,
                  float* y, int64_t ldy) {
  // Rows go in chunks, each against every panel: a chunk's rows stay in L2 while the
  // weights stream past them.
  constexpr int64_t kChunkRows = 192;
  const detail::PackedKernel kernel = kernel_for(w.isa);
  const int64_t panels = w.panel_count();
  ThreadPool& pool = ThreadPool::global();
  for (int64_t first = 0; first < m; first += kChunkRows) {
    const int64_t rows = std::min(kChunkRows, m - first);
    const detail::PackedCall call{.m = rows,
                                  .tiles = (rows + kernel.mr - 1) / kernel.mr,
                                  .x = x + first * ldx,
                                  .ldx = ldx,
                                  .panels = w.panels.get(),
                                  .n = w.n,
                                  .k = w.k,
                                  .bias = bias,
                                  .y = y + first * ldy,
                                  .ldy = ldy};
    if (pool.threads() < 2 || rows * w.n * w.k < (int64_t{1} << 16) || panels < 2) {
      kernel.panels(call, 0, panels);
      continue;
    }
    pool.parallel_for(static_cast<size_t>(panels), 1, [&](size_t begin, size_t end) {
      kernel.panels(call, static_cast<int64_t>(begin), static_cast<int64_t>(end));
    });
  }
}

}  // namespace et::kernels
