// Single-precision matrix products for every kernel that multiplies matrices (linear,
// mm, bmm, addmm, convolution, the LSTM/GRU cells, and the XNNPACK nodes Debian's XNNPACK
// lacks): A and B packed into panels, blocked for the caches, multiplied by a vectorised
// microkernel chosen for the CPU at run time (AVX-512F, AVX2 with FMA, or portable C++).
//
// Determinism: for one ISA, each element of C is computed by the same sequence of
// operations whatever the thread split (its k products summed in order, block by block),
// so a call gives the same bits every time on one machine. Different ISAs differ in the
// last bits (FMA rounds once). The ISA is cpu_isa.h's selected_isa().
//
// Memory: each thread that runs a product keeps its packing buffer for the next call,
// at most about 1.2 MB (a 256 x 1024 panel of B and a 256 x 128 panel of A).
#pragma once

#include <cstdint>

#include "kernels/math/cpu_isa.h"

namespace et::kernels {

// C[m, n] = A[m, k] * B[k, n], or C += A * B with `accumulate`.
// A[i, p] = a[i * lda + p]; B[p, j] = b[p * ldb + j], or b[j * ldb + p] when
// b_transposed (a linear layer's [n, k] weight); C[i, j] = c[i * ldc + j].
// k == 0 gives zeros (or leaves C as it is with `accumulate`).
struct SgemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  bool b_transposed = false;
  float* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
};

// The product on the calling thread.
void sgemm(const SgemmArgs& args);

// The product split by rows (or by columns when there are few rows) across the process's
// threads when it is large enough to pay for them; same bits as sgemm().
void parallel_sgemm(const SgemmArgs& args);

// The product with one particular ISA. REQUIRES: `isa` is in available_isas().
void sgemm_on(CpuIsa isa, const SgemmArgs& args);

}  // namespace et::kernels
