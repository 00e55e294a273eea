// Internal to packed_sgemm.cc and sgemm_*.cc: how packed_sgemm() hands a product to
// one ISA's microkernels (sgemm_blocked.h's packed_panels). Plain data only: every
// file, whatever its ISA flags, shares these types, and no code.
#pragma once

#include <cstdint>

namespace et::kernels::detail {

// A packed_sgemm() call as one ISA's kernels run it (nothing of PackedWeights, whose
// members would be compiled into each ISA's file): x's
// m rows (ldx apart) go in `tiles` balanced row tiles (sgemm_blocked.h's tile_height), each
// multiplied straight from x's rows, against W's n x k panels (PackedWeights::panels).
struct PackedCall {
  int64_t m = 0, tiles = 0;
  const float* x = nullptr;
  int64_t ldx = 0;
  const float* panels = nullptr;
  int64_t n = 0, k = 0;
  const float* bias = nullptr;
  float* y = nullptr;
  int64_t ldy = 0;
};

// One ISA's side of packed_sgemm(): its register tile, and the product over W's panels
// [first, last).
struct PackedKernel {
  int64_t mr = 0, nr = 0;
  void (*panels)(const PackedCall& call, int64_t first, int64_t last) = nullptr;
};

}  // namespace et::kernels::detail
