// aten::convolution_backward.out(Tensor grad_output, Tensor input, Tensor weight,
//     SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation,
//     bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask, *,
//     Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
// The gradients of aten::convolution with respect to its input (out0), weight (out1)
// and bias (out2, one value per output channel), each computed only where output_mask
// asks; an output not asked for is left as the program sized it (empty). 1-, 2- and
// 3-d convolutions, grouped, dilated and transposed. Accumulates in double.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

constexpr int kMaxSpatial = 3;

// Spatial dims padded to three (missing dims have size 1 and unit parameters).
struct Geometry {
  int64_t batch = 0, x_channels = 0, y_channels = 0, groups = 1;
  std::array<int64_t, kMaxSpatial> x{1, 1, 1}, y{1, 1, 1}, k{1, 1, 1};
  std::array<int64_t, kMaxSpatial> stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1}, out_pad{0, 0, 0};
};

Result<int64_t> param(const KernelContext& ctx, std::span<const int64_t> list, int i, int spatial,
                      const char* name, int64_t lo, int64_t fallback) {
  constexpr int64_t kMaxParam = int64_t{1} << 20;
  int64_t v = fallback;
  if (list.size() == 1) {
    v = list[0];
  } else if (static_cast<int>(list.size()) == spatial) {
    v = list[i];
  } else if (!list.empty()) {
    return ctx.fail(
        fmt::format("{} has {} values for {} spatial dims", name, list.size(), spatial));
  }
  if (v < lo || v > kMaxParam) return ctx.fail(fmt::format("{} {} is out of range", name, v));
  return v;
}

Status convolution_backward_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* grad_out, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.input(2));
  ET_ASSIGN_OR_RETURN(auto bias_sizes, ctx.optional_int_list_arg(3));
  ET_ASSIGN_OR_RETURN(std::span<const int64_t> stride, ctx.int_list_arg(4));
  ET_ASSIGN_OR_RETURN(std::span<const int64_t> padding, ctx.int_list_arg(5));
  ET_ASSIGN_OR_RETURN(std::span<const int64_t> dilation, ctx.int_list_arg(6));
  ET_ASSIGN_OR_RETURN(bool transposed, ctx.bool_arg(7));
  ET_ASSIGN_OR_RETURN(std::span<const int64_t> output_padding, ctx.int_list_arg(8));
  ET_ASSIGN_OR_RETURN(int64_t groups, ctx.int_arg(9));
  ET_ASSIGN_OR_RETURN(std::span<const bool> mask, ctx.bool_list_arg(10));
  if (mask.size() != 3) return ctx.fail("output_mask needs 3 values");
  const int spatial = input->dim() - 2;
  if (spatial < 1 || spatial > kMaxSpatial || weight->dim() != input->dim() ||
      grad_out->dim() != input->dim()) {
    return ctx.unsupported(
        fmt::format("input {}, weight {}, grad_output {}: 1-, 2- and 3-d "
                    "convolutions are supported",
                    shape_string(input->sizes()), shape_string(weight->sizes()),
                    shape_string(grad_out->sizes())));
  }
  if (!is_floating(input->dtype()) || weight->dtype() != input->dtype() ||
      grad_out->dtype() != input->dtype()) {
    return ctx.fail("grad_output, input and weight need the same floating-point dtype");
  }
  if (groups < 1 || groups > (int64_t{1} << 20)) return ctx.fail("groups is out of range");
  Geometry g;
  g.groups = groups;
  g.batch = input->size(0);
  g.x_channels = input->size(1);
  // Weight: [y_channels, x_channels / groups, k...], transposed [x_channels, y_channels / groups,
  // k...].
  g.y_channels = transposed ? weight->size(1) * groups : weight->size(0);
  const int64_t w_x_channels = transposed ? weight->size(0) : weight->size(1) * groups;
  if (w_x_channels != g.x_channels || g.x_channels % groups != 0 || g.y_channels % groups != 0) {
    return ctx.fail(fmt::format("weight {} does not fit input {} with {} groups",
                                shape_string(weight->sizes()), shape_string(input->sizes()),
                                groups));
  }
  const int lead = kMaxSpatial - spatial;  // geometry index of spatial dim 0
  for (int d = 0; d < spatial; ++d) {
    const int a = lead + d;
    ET_ASSIGN_OR_RETURN(g.stride[a], param(ctx, stride, d, spatial, "stride", 1, 1));
    ET_ASSIGN_OR_RETURN(g.pad[a], param(ctx, padding, d, spatial, "padding", 0, 0));
    ET_ASSIGN_OR_RETURN(g.dil[a], param(ctx, dilation, d, spatial, "dilation", 1, 1));
    ET_ASSIGN_OR_RETURN(g.out_pad[a],
                        param(ctx, output_padding, d, spatial, "output_padding", 0, 0));
    g.x[a] = input->size(2 + d);
    g.k[a] = weight->size(2 + d);
    const int64_t span = g.dil[a] * (g.k[a] - 1) + 1;  // bounded: dil <= 2^20, k < 2^31
    // The output size the forward convolution gives; grad_output must have it.
    const int64_t want = transposed
                             ? (g.x[a] - 1) * g.stride[a] - 2 * g.pad[a] + span + g.out_pad[a]
                             : (g.x[a] + 2 * g.pad[a] - span) / g.stride[a] + 1;
    const bool fits = transposed ? true : g.x[a] + 2 * g.pad[a] >= span;
    if (!fits || want != grad_out->size(2 + d) || g.k[a] < 1) {
      return ctx.fail(
          fmt::format("grad_output {} does not match the convolution of input {} by "
                      "weight {}",
                      shape_string(grad_out->sizes()), shape_string(input->sizes()),
                      shape_string(weight->sizes())));
    }
    g.y[a] = want;
  }
  if (grad_out->size(0) != g.batch || grad_out->size(1) != g.y_channels) {
    return ctx.fail(fmt::format("grad_output {} has the wrong batch or channel count",
                                shape_string(grad_out->sizes())));
  }
  Tensor* grad_input = nullptr;
  Tensor* grad_weight = nullptr;
  Tensor* grad_bias = nullptr;
  if (mask[0]) {
    ET_ASSIGN_OR_RETURN(grad_input, ctx.output(11));
    ET_RETURN_IF_ERROR(resize_output(ctx, *grad_input, shape_of(*input)));
  }
  if (mask[1]) {
    ET_ASSIGN_OR_RETURN(grad_weight, ctx.output(12));
    ET_RETURN_IF_ERROR(resize_output(ctx, *grad_weight, shape_of(*weight)));
  }
  if (mask[2]) {
    ET_ASSIGN_OR_RETURN(grad_bias, ctx.output(13));
    if (bias_sizes && (bias_sizes->size() != 1 || (*bias_sizes)[0] != g.y_channels))
      return ctx.fail("bias_sizes must be [output channels]");
    ET_RETURN_IF_ERROR(resize_output(ctx, *grad_bias, Shape{{g.y_channels}, 1}));
  }
  const int64_t x_plane = g.x[0] * g.x[1] * g.x[2], y_plane = g.y[0] * g.y[1] * g.y[2];
  const int64_t taps = g.k[0] * g.k[1] * g.k[2];
  const int64_t xg = g.x_channels / groups, yg = g.y_channels / groups;
  ET_ASSIGN_OR_RETURN(const double* x, dense_as<double>(ctx, *input));
  ET_ASSIGN_OR_RETURN(const double* w, dense_as<double>(ctx, *weight));
  ET_ASSIGN_OR_RETURN(const double* gy, dense_as<double>(ctx, *grad_out));
  double* gx = nullptr;
  double* gw = nullptr;
  if (grad_input) {
    ET_ASSIGN_OR_RETURN(void* s, ctx.temp_product({input->numel() + 1}, sizeof(double)));
    gx = static_cast<double*>(s);
    std::fill(gx, gx + input->numel(), 0.0);
  }
  if (grad_weight) {
    ET_ASSIGN_OR_RETURN(void* s, ctx.temp_product({weight->numel() + 1}, sizeof(double)));
    gw = static_cast<double*>(s);
    std::fill(gw, gw + weight->numel(), 0.0);
  }
  // Every (small-side position, tap) pair: the side whose positions the stride scales
  // is the output for a convolution and the input for a transposed one.
  const auto& small = transposed ? g.x : g.y;
  const auto& big = transposed ? g.y : g.x;
  if (grad_input || grad_weight) {
    for (int64_t s0 = 0; s0 < small[0]; ++s0)
      for (int64_t s1 = 0; s1 < small[1]; ++s1)
        for (int64_t s2 = 0; s2 < small[2]; ++s2)
          for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
            const int64_t b0 = s0 * g.stride[0] - g.pad[0] + k0 * g.dil[0];
            if (b0 < 0 || b0 >= big[0]) continue;
            for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
              const int64_t b1 = s1 * g.stride[1] - g.pad[1] + k1 * g.dil[1];
              if (b1 < 0 || b1 >= big[1]) continue;
              for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                const int64_t b2 = s2 * g.stride[2] - g.pad[2] + k2 * g.dil[2];
                if (b2 < 0 || b2 >= big[2]) continue;
                const int64_t small_at = (s0 * small[1] + s1) * small[2] + s2;
                const int64_t big_at = (b0 * big[1] + b1) * big[2] + b2;
                const int64_t x_at = transposed ? small_at : big_at;
                const int64_t y_at = transposed ? big_at : small_at;
                const int64_t tap = (k0 * g.k[1] + k1) * g.k[2] + k2;
                for (int64_t n = 0; n < g.batch; ++n) {
                  for (int64_t grp = 0; grp < groups; ++grp) {
                    for (int64_t cy = 0; cy < yg; ++cy) {
                      const int64_t yc = grp * yg + cy;
                      const double dy = gy[(n * g.y_channels + yc) * y_plane + y_at];
                      for (int64_t cx = 0; cx < xg; ++cx) {
                        const int64_t xc = grp * xg + cx;
                        const int64_t w_at =
                            (transposed ? xc * yg + cy : yc * xg + cx) * taps + tap;
                        const int64_t xi = (n * g.x_channels + xc) * x_plane + x_at;
                        if (gx) gx[xi] += dy * w[w_at];
                        if (gw) gw[w_at] += dy * x[xi];
                      }
                    }
                  }
                }
              }
            }
          }
  }
  if (grad_input) ET_RETURN_IF_ERROR(store_dense<double>(ctx, gx, *grad_input));
  if (grad_weight) ET_RETURN_IF_ERROR(store_dense<double>(ctx, gw, *grad_weight));
  if (grad_bias) {
    ET_ASSIGN_OR_RETURN(void* s, ctx.temp_product({g.y_channels + 1}, sizeof(double)));
    double* gb = static_cast<double*>(s);
    for (int64_t c = 0; c < g.y_channels; ++c) {
      double sum = 0;
      for (int64_t n = 0; n < g.batch; ++n) {
        const double* row = gy + (n * g.y_channels + c) * y_plane;
        for (int64_t i = 0; i < y_plane; ++i) sum += row[i];
      }
      gb[c] = sum;
    }
    ET_RETURN_IF_ERROR(store_dense<double>(ctx, gb, *grad_bias));
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::convolution_backward.out", convolution_backward_out);

}  // namespace
}  // namespace et::kernels
