// 2-d pooling geometry (kernel, stride, padding, dilation, ceil mode), PyTorch's
// output-size rule included.
#pragma once

#include <fmt/format.h>

#include <span>

#include "runtime/core/kernel.h"

namespace et::kernels {

struct PoolGeometry {
  int64_t k_h = 1, k_w = 1, s_h = 1, s_w = 1, p_h = 0, p_w = 0, d_h = 1, d_w = 1;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
};

inline int64_t pool_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride,
                                int64_t dilation, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = span / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;  // the last window must start inside
  return out;
}

// Reads kernel_size, stride (empty: the kernel), padding and dilation (empty: 1).
inline Result<PoolGeometry> pool_geometry(const KernelContext& ctx, int64_t in_h, int64_t in_w,
                                          std::span<const int64_t> kernel,
                                          std::span<const int64_t> stride,
                                          std::span<const int64_t> padding,
                                          std::span<const int64_t> dilation, bool ceil_mode) {
  auto pick = [](std::span<const int64_t> v, int i, int64_t fallback) {
    return v.empty() ? fallback : v.size() == 1 ? v[0] : v[i];
  };
  if (kernel.empty() || kernel.size() > 2 || stride.size() > 2 || padding.size() > 2 ||
      dilation.size() > 2) {
    return ctx.fail("pooling takes one or two values per parameter");
  }
  PoolGeometry g;
  g.k_h = pick(kernel, 0, 1);
  g.k_w = pick(kernel, 1, 1);
  g.s_h = pick(stride, 0, g.k_h);
  g.s_w = pick(stride, 1, g.k_w);
  g.p_h = pick(padding, 0, 0);
  g.p_w = pick(padding, 1, 0);
  g.d_h = pick(dilation, 0, 1);
  g.d_w = pick(dilation, 1, 1);
  constexpr int64_t kMaxParam = int64_t{1} << 20;  // bounded before any arithmetic
  for (int64_t v : {g.k_h, g.k_w, g.s_h, g.s_w, g.d_h, g.d_w, g.p_h, g.p_w}) {
    if (v < 0 || v > kMaxParam) return ctx.fail("a pooling parameter is out of range");
  }
  if (g.k_h <= 0 || g.k_w <= 0 || g.s_h <= 0 || g.s_w <= 0 || g.d_h <= 0 || g.d_w <= 0 ||
      g.p_h < 0 || g.p_w < 0 || 2 * g.p_h > g.k_h || 2 * g.p_w > g.k_w) {
    return ctx.fail(
        "invalid kernel, stride, padding or dilation (padding may be at most half the kernel)");
  }
  g.in_h = in_h;
  g.in_w = in_w;
  g.out_h = pool_output_size(in_h, g.k_h, g.p_h, g.s_h, g.d_h, ceil_mode);
  g.out_w = pool_output_size(in_w, g.k_w, g.p_w, g.s_w, g.d_w, ceil_mode);
  if (g.out_h <= 0 || g.out_w <= 0) return ctx.fail("the output would be empty");
  return g;
}

}  // namespace et::kernels
