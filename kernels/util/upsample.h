// Output sizes and source coordinates for the upsample ops, as PyTorch computes them.
#pragma once

#include <cmath>
#include <optional>
#include <span>

#include "kernels/util/copy_util.h"

namespace et::kernels {

struct UpsampleGeometry {
  int64_t in_h, in_w, out_h, out_w;
  double scale_h, scale_w;  // input pixels per output pixel
};

// From output_size, or from scale_factors (output = floor(input * factor), and the
// source scale 1 / factor, as PyTorch does when it does not recompute the scale).
inline Result<UpsampleGeometry> upsample_geometry(
    const KernelContext& ctx, const Tensor& in, std::optional<std::span<const int64_t>> output_size,
    std::optional<std::span<const double>> scale_factors, bool align_corners) {
  if (in.dim() != 4) return ctx.fail("upsampling needs a 4-d input");
  UpsampleGeometry g{in.size(2), in.size(3), 0, 0, 0, 0};
  // As PyTorch: nothing to sample from an empty plane (and no index into it is valid).
  if (g.in_h <= 0 || g.in_w <= 0) {
    return ctx.fail("upsampling needs an input with a non-empty height and width");
  }
  if (output_size && output_size->size() == 2) {
    g.out_h = (*output_size)[0];
    g.out_w = (*output_size)[1];
    g.scale_h = static_cast<double>(g.in_h) / static_cast<double>(g.out_h);
    g.scale_w = static_cast<double>(g.in_w) / static_cast<double>(g.out_w);
  } else if (scale_factors && scale_factors->size() == 2 && (*scale_factors)[0] > 0 &&
             (*scale_factors)[1] > 0) {
    if ((*scale_factors)[0] > 1e6 || (*scale_factors)[1] > 1e6)
      return ctx.fail("a scale factor is out of range");
    g.out_h = static_cast<int64_t>(std::floor(static_cast<double>(g.in_h) * (*scale_factors)[0]));
    g.out_w = static_cast<int64_t>(std::floor(static_cast<double>(g.in_w) * (*scale_factors)[1]));
    g.scale_h = 1.0 / (*scale_factors)[0];
    g.scale_w = 1.0 / (*scale_factors)[1];
  } else {
    return ctx.fail("give either a 2-value output_size or 2 positive scale_factors");
  }
  if (g.out_h <= 0 || g.out_w <= 0 || g.out_h > (1 << 20) || g.out_w > (1 << 20)) {
    return ctx.fail("the output size is out of range");
  }
  if (align_corners) {
    g.scale_h =
        g.out_h > 1 ? static_cast<double>(g.in_h - 1) / static_cast<double>(g.out_h - 1) : 0;
    g.scale_w =
        g.out_w > 1 ? static_cast<double>(g.in_w - 1) / static_cast<double>(g.out_w - 1) : 0;
  }
  return g;
}

}  // namespace et::kernels
