// Internal to sgemm_*.cc: the cache blocking and panel packing around one ISA's
// microkernels. Each ISA's file includes this with its own compiler flags, so everything
// here has internal linkage (an anonymous namespace): no AVX-compiled copy of a function
// can be picked by the linker for the portable path.
//
// A microkernel set K provides:
//   kMr, kNr         the register tile (rows of A by columns of B);
//   kKc, kMc, kNc    the cache blocks (depth, rows, columns), kMc % kMr == kNc % kNr == 0;
//   tile<R, kRowsA>(kc, a, lda, b, c, ldc, accumulate)    for 1 <= R <= kMr
//       the R x kNr tile sum_p A(i, p) * b[p * kNr + j] over p < kc, summed from zero in
//       order of p, then stored to c[i * ldc + j] (added to it with accumulate), where
//       A(i, p) is a[p * kMr + i] (A packed) or, with kRowsA, a[i * lda + p] (A's rows);
//   row(kc, a, b, ldb, n, c, accumulate)          c[j] (+)= sum_p a[p] * b[p * ldb + j]
//   row_transposed(kc, a, b, ldb, n, c, accumulate) c[j] (+)= sum_p a[p] * b[j * ldb + p]
#pragma once

#include <cstdint>

#include "kernels/math/sgemm.h"
#include "kernels/math/sgemm_packed_call.h"

namespace et::kernels::detail {

// This thread's packing buffer, at least `floats` long (kept for the next call).
float* sgemm_scratch(int64_t floats);

// At most this many rows of C (in the whole product, not one thread's share) go row by row,
// without packing: packing B would cost as much as the product itself.
constexpr int64_t kSmallRows = 4;

namespace {

template <typename I>
constexpr I lesser(I a, I b) {
  return a < b ? a : b;
}

template <typename I>
constexpr I round_up(I v, I to) {
  return (v + to - 1) / to * to;
}

// B[pc:pc+kc, jc:jc+nc] as panels of NR columns, each kc rows of NR, zero-padded.
template <int NR>
void pack_b(const SgemmArgs& g, int64_t pc, int64_t kc, int64_t jc, int64_t nc, float* out) {
  for (int64_t q = 0; q < nc; q += NR) {
    const int64_t w = lesser<int64_t>(NR, nc - q);
    float* panel = out + q * kc;
    if (!g.b_transposed) {
      for (int64_t p = 0; p < kc; ++p) {
        const float* row = g.b + (pc + p) * g.ldb + jc + q;
        float* dst = panel + p * NR;
        for (int64_t j = 0; j < w; ++j) dst[j] = row[j];
        for (int64_t j = w; j < NR; ++j) dst[j] = 0.0f;
      }
      continue;
    }
    for (int64_t j = 0; j < NR; ++j) {
      if (j >= w) {
        for (int64_t p = 0; p < kc; ++p) panel[p * NR + j] = 0.0f;
        continue;
      }
      const float* column = g.b + (jc + q + j) * g.ldb + pc;
      for (int64_t p = 0; p < kc; ++p) panel[p * NR + j] = column[p];
    }
  }
}

// A[ic:ic+mc, pc:pc+kc] as panels of MR rows, each kc columns of MR, zero-padded.
template <int MR>
void pack_a(const SgemmArgs& g, int64_t ic, int64_t mc, int64_t pc, int64_t kc, float* out) {
  for (int64_t r = 0; r < mc; r += MR) {
    const int64_t h = lesser<int64_t>(MR, mc - r);
    float* panel = out + r * kc;
    for (int64_t i = 0; i < MR; ++i) {
      if (i >= h) {
        for (int64_t p = 0; p < kc; ++p) panel[p * MR + i] = 0.0f;
        continue;
      }
      const float* row = g.a + (ic + r + i) * g.lda + pc;
      for (int64_t p = 0; p < kc; ++p) panel[p * MR + i] = row[p];
    }
  }
}

void zero_or_keep(const SgemmArgs& g) {
  if (g.accumulate) return;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] = 0.0f;
  }
}

// Few rows: each row of C straight from A's row and B, no packing.
template <class K>
void by_rows(const SgemmArgs& g) {
  for (int64_t i = 0; i < g.m; ++i) {
    const float* a = g.a + i * g.lda;
    float* c = g.c + i * g.ldc;
    if (g.b_transposed) {
      K::row_transposed(g.k, a, g.b, g.ldb, g.n, c, g.accumulate);
    } else {
      K::row(g.k, a, g.b, g.ldb, g.n, c, g.accumulate);
    }
  }
}

// The product, blocked (BLIS's loop order: columns, depth, rows, then register tiles), or
// row by row when `rows_path` (chosen from the whole product's row count by the caller).
template <class K>
void blocked_sgemm(const SgemmArgs& g, bool rows_path) {
  constexpr int64_t MR = K::kMr, NR = K::kNr;
  if (g.m <= 0 || g.n <= 0) return;
  if (g.k <= 0) return zero_or_keep(g);
  if (rows_path) return by_rows<K>(g);
  const int64_t kc_max = lesser<int64_t>(K::kKc, g.k);
  const int64_t nc_max = lesser<int64_t>(K::kNc, round_up(g.n, NR));
  const int64_t mc_max = lesser<int64_t>(K::kMc, round_up(g.m, MR));
  float* packed_b = sgemm_scratch(kc_max * nc_max + kc_max * mc_max + MR * NR);
  float* packed_a = packed_b + kc_max * nc_max;
  float* edge = packed_a + kc_max * mc_max;
  for (int64_t jc = 0; jc < g.n; jc += K::kNc) {
    const int64_t nc = lesser<int64_t>(K::kNc, g.n - jc);
    for (int64_t pc = 0; pc < g.k; pc += K::kKc) {
      const int64_t kc = lesser<int64_t>(K::kKc, g.k - pc);
      const bool accumulate = g.accumulate || pc > 0;
      pack_b<NR>(g, pc, kc, jc, nc, packed_b);
      for (int64_t ic = 0; ic < g.m; ic += K::kMc) {
        const int64_t mc = lesser<int64_t>(K::kMc, g.m - ic);
        pack_a<MR>(g, ic, mc, pc, kc, packed_a);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int64_t nr = lesser<int64_t>(NR, nc - jr);
          const float* b_panel = packed_b + jr * kc;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t mr = lesser<int64_t>(MR, mc - ir);
            const float* a_panel = packed_a + ir * kc;
            float* c = g.c + (ic + ir) * g.ldc + jc + jr;
            if (mr == MR && nr == NR) {
              K::template tile<MR, false>(kc, a_panel, 0, b_panel, c, g.ldc, accumulate);
              continue;
            }
            // An edge tile: computed whole into `edge`, its valid part stored the way
            // tile() stores (sum from zero, then added to C).
            K::template tile<MR, false>(kc, a_panel, 0, b_panel, edge, NR, false);
            for (int64_t i = 0; i < mr; ++i) {
              for (int64_t j = 0; j < nr; ++j) {
                const float v = edge[i * NR + j];
                c[i * g.ldc + j] = accumulate ? c[i * g.ldc + j] + v : v;
              }
            }
          }
        }
      }
    }
  }
}

// Rows of row tile t when m rows go into `tiles` tiles as evenly as possible.
int64_t tile_height(int64_t m, int64_t tiles, int64_t t) {
  return m / tiles + (t < m % tiles ? 1 : 0);
}

// The tile of `rows` (1 .. kMr) rows of A, read from its rows (lda apart), by K's kernel
// of that height.
template <class K, int R = K::kMr>
void tile_of(int64_t rows, int64_t kc, const float* a, int64_t lda, const float* b, float* c,
             int64_t ldc, bool accumulate) {
  if constexpr (R > 1) {
    if (rows < R) return tile_of<K, R - 1>(rows, kc, a, lda, b, c, ldc, accumulate);
  }
  K::template tile<R, true>(kc, a, lda, b, c, ldc, accumulate);
}

// packed_sgemm() over W's panels [first, last): per panel, depth block by depth block,
// every row tile against the block (which stays in L1), then the bias.
template <class K>
void packed_panels(const PackedCall& g, int64_t first, int64_t last) {
  constexpr int64_t MR = K::kMr, NR = K::kNr;
  const int64_t k = g.k, n = g.n;
  alignas(64) float edge[MR * NR];
  for (int64_t q = first; q < last; ++q) {
    const float* panel = g.panels + q * k * NR;
    const int64_t j0 = q * NR, nr = lesser(NR, n - j0);
    for (int64_t pc = 0; pc < k; pc += K::kKc) {
      const int64_t kc = lesser<int64_t>(K::kKc, k - pc);
      const bool accumulate = pc > 0;
      for (int64_t t = 0, i0 = 0; t < g.tiles; ++t) {
        const int64_t rows = tile_height(g.m, g.tiles, t);
        const float* a = g.x + i0 * g.ldx + pc;
        float* c = g.y + i0 * g.ldy + j0;
        i0 += rows;
        if (nr == NR) {
          tile_of<K>(rows, kc, a, g.ldx, panel + pc * NR, c, g.ldy, accumulate);
          continue;
        }
        tile_of<K>(rows, kc, a, g.ldx, panel + pc * NR, edge, NR, false);
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < nr; ++j) {
            const float v = edge[i * NR + j];
            c[i * g.ldy + j] = accumulate ? c[i * g.ldy + j] + v : v;
          }
        }
      }
    }
    if (g.bias == nullptr) continue;
    for (int64_t i = 0; i < g.m; ++i) {
      float* row = g.y + i * g.ldy + j0;
      for (int64_t j = 0; j < nr; ++j) row[j] += g.bias[j0 + j];
    }
  }
}

}  // namespace
}  // namespace et::kernels::detail
