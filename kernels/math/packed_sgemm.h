// Products with a constant matrix packed once: a linear layer's weights laid out in the
// panels sgemm's microkernels read (sgemm.h packs them on every call instead), so
// loading pays for the packing and every call, whatever its row count, streams them.
// One packed copy serves every caller (it is read-only once made).
//
// Determinism: for one ISA, each output element is its k products summed in order
// (in blocks of the ISA's depth, as sgemm does), then the bias added; the thread split
// does not change it. Different ISAs differ in the last bits (FMA rounds once).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "kernels/math/cpu_isa.h"

namespace et::kernels {

struct PackedWeights {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  int64_t n = 0, k = 0;
  CpuIsa isa = CpuIsa::kPortable;  // the microkernels the panels are laid out for
  int64_t panel_width = 0;         // columns of W per panel: that ISA's register tile
  // panel_count() panels, 64-byte aligned, each k rows of panel_width floats: panel q
  // holds W's columns [q * panel_width, ...) (y's columns), zero past n.
  std::unique_ptr<float[], Free> panels;

  int64_t panel_count() const { return panel_width == 0 ? 0 : (n + panel_width - 1) / panel_width; }
  size_t bytes() const {
    return static_cast<size_t>(panel_count() * panel_width * k) * sizeof(float);
  }
};

// Packs W for y = x W^T: `w` is [n, k] row-major (a linear layer's weight), or [k, n]
// when `w_is_k_by_n`. REQUIRES: n, k > 0 and `isa` in available_isas().
PackedWeights pack_weights(const float* w, int64_t n, int64_t k, bool w_is_k_by_n,
                           CpuIsa isa = selected_isa());

// y[i, j] = sum_p x[i, p] W[j, p] (+ bias[j] when bias is not null) for i < m, j < n;
// x rows are ldx floats apart, y rows ldy. m == 0 does nothing. Splits W's panels
// across the process's threads when the product is large enough to pay for them.
void packed_sgemm(int64_t m, const float* x, int64_t ldx, const PackedWeights& w, const float* bias,
                  float* y, int64_t ldy);

}  // namespace et::kernels
