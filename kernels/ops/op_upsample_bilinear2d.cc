// aten::upsample_bilinear2d.vec_out(Tensor input, SymInt[]? output_size,
//     bool align_corners, float[]? scale_factors, *, Tensor(a!) out)
#include <algorithm>

#include "kernels/util/dense.h"
#include "kernels/util/upsample.h"

namespace et::kernels {
namespace {

// PyTorch's area_pixel_compute_source_index.
double source_index(double scale, int64_t dst, bool align_corners) {
  if (align_corners) return scale * static_cast<double>(dst);
  return std::max(scale * (static_cast<double>(dst) + 0.5) - 0.5, 0.0);
}

Status upsample_bilinear2d_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* in, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto output_size, ctx.optional_int_list_arg(1));
  ET_ASSIGN_OR_RETURN(bool align_corners, ctx.bool_arg(2));
  if (ctx.num_args() < 5) return ctx.fail("arguments are missing");
  std::optional<std::span<const double>> scales;
  if (ctx.arg(3).kind() == ValueKind::kDoubleList) scales = ctx.arg(3).double_list();
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  if (!is_floating(in->dtype()))
    return ctx.fail("bilinear upsampling needs a floating-point input");
  ET_ASSIGN_OR_RETURN(UpsampleGeometry g,
                      upsample_geometry(ctx, *in, output_size, scales, align_corners));
  ET_RETURN_IF_ERROR(
      resize_output(ctx, *out, Shape{{in->size(0), in->size(1), g.out_h, g.out_w}, 4}));
  const int64_t planes = in->size(0) * in->size(1);
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *in));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const double sh = source_index(g.scale_h, oh, align_corners);
      const int64_t h0 = std::min(static_cast<int64_t>(sh), g.in_h - 1);
      const int64_t h1 = std::min(h0 + 1, g.in_h - 1);
      const T lh = static_cast<T>(sh - static_cast<double>(h0));
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const double sw = source_index(g.scale_w, ow, align_corners);
        const int64_t w0 = std::min(static_cast<int64_t>(sw), g.in_w - 1);
        const int64_t w1 = std::min(w0 + 1, g.in_w - 1);
        const T lw = static_cast<T>(sw - static_cast<double>(w0));
        for (int64_t p = 0; p < planes; ++p) {
          const T* plane = x + p * g.in_h * g.in_w;
          const T top = plane[h0 * g.in_w + w0] * (T(1) - lw) + plane[h0 * g.in_w + w1] * lw;
          const T bottom = plane[h1 * g.in_w + w0] * (T(1) - lw) + plane[h1 * g.in_w + w1] * lw;
          y[(p * g.out_h + oh) * g.out_w + ow] = top * (T(1) - lh) + bottom * lh;
        }
      }
    }
    return store_dense<T>(ctx, y, *out);
  };
  return in->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::upsample_bilinear2d.vec_out", upsample_bilinear2d_out);

}  // namespace
}  // namespace et::kernels
