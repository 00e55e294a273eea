// aten::_upsample_bilinear2d_aa.out(Tensor self, SymInt[2] output_size,
//     bool align_corners, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out)
// Antialiased bilinear resizing (F.interpolate(mode="bilinear", antialias=True)), as
// PyTorch's CPU kernel computes it: separable, width first then height (a dim whose
// size does not change is not resampled), each output a normalised triangle-filter
// average over a support that widens with the downscale factor. float32 and float64;
// uint8 (PyTorch's fixed-point path) is refused.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

// One output index's taps along a dim: input [first, first + count) with `weights`.
template <typename T>
struct Taps {
  int64_t stride = 0;  // weights per output index
  int64_t* first = nullptr;
  int64_t* count = nullptr;
  T* weights = nullptr;
};

// PyTorch's area_pixel_compute_scale in T.
template <typename T>
T source_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> given) {
  if (align_corners) {
    return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  }
  if (given && *given > 0) return convert_value<T>(1.0 / *given);
  return static_cast<T>(in) / static_cast<T>(out);
}

// The taps of every output index along one dim. Intermediate steps round to T where
// PyTorch's do (its scalar_t) and compute in double where its do.
template <typename T>
Result<Taps<T>> compute_taps(const KernelContext& ctx, int64_t in, int64_t out, T scale) {
  const double s = static_cast<double>(scale);
  if (std::isnan(s)) return ctx.fail("the resampling scale is not a number");
  const T support = convert_value<T>(s >= 1.0 ? s : 1.0);
  const T invscale = convert_value<T>(s >= 1.0 ? 1.0 / s : 1.0);
  // At most every input index contributes, whatever the support.
  const double widest = std::ceil(static_cast<double>(support)) * 2 + 1;
  Taps<T> taps;
  taps.stride = widest < static_cast<double>(in) ? static_cast<int64_t>(widest) : in;
  ET_ASSIGN_OR_RETURN(void* idx, ctx.temp_product({out, 2}, sizeof(int64_t)));
  ET_ASSIGN_OR_RETURN(void* wts, ctx.temp_product({out, taps.stride}, sizeof(T)));
  taps.first = static_cast<int64_t*>(idx);
  taps.count = taps.first + out;
  taps.weights = static_cast<T*>(wts);
  for (int64_t i = 0; i < out; ++i) {
    const T center = convert_value<T>(s * (static_cast<double>(i) + 0.5));
    const int64_t lo = std::max<int64_t>(
        convert_value<int64_t>(static_cast<double>(T(center - support)) + 0.5), 0);
    const int64_t hi = std::min<int64_t>(
        convert_value<int64_t>(static_cast<double>(T(center + support)) + 0.5), in);
    // hi <= in and lo >= 0, so hi - lo cannot overflow once hi > lo.
    const int64_t n = hi > lo ? std::min<int64_t>(hi - lo, taps.stride) : 0;
    T* w = taps.weights + i * taps.stride;
    T total(0);
    for (int64_t j = 0; j < n; ++j) {
      const T offset = static_cast<T>(j + lo) - center;
      T x = convert_value<T>((static_cast<double>(offset) + 0.5) * static_cast<double>(invscale));
      if (x < 0) x = -x;
      w[j] = x < 1 ? T(1) - x : T(0);
      total += w[j];
    }
    if (total != 0) {
      for (int64_t j = 0; j < n; ++j) w[j] /= total;
    }
    taps.first[i] = lo;
    taps.count[i] = n;
  }
  return taps;
}

// dst[o * dst_step] = sum_j src[(first + j) * src_step] * w_j for each output o.
template <typename T>
void resample_line(const T* src, int64_t src_step, T* dst, int64_t dst_step, int64_t out,
                   const Taps<T>& taps) {
  for (int64_t o = 0; o < out; ++o) {
    const int64_t n = taps.count[o];
    const T* w = taps.weights + o * taps.stride;
    T t(0);
    if (n > 0) {
      const T* s = src + taps.first[o] * src_step;
      t = s[0] * w[0];
      for (int64_t j = 1; j < n; ++j) t += s[j * src_step] * w[j];
    }
    dst[o * dst_step] = t;
  }
}

Status upsample_bilinear2d_aa_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* in, ctx.input(0));
  ET_ASSIGN_OR_RETURN(std::span<const int64_t> size, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(bool align_corners, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(std::optional<double> scale_h, ctx.optional_double_arg(3));
  ET_ASSIGN_OR_RETURN(std::optional<double> scale_w, ctx.optional_double_arg(4));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(5));
  if (in->dim() != 4) return ctx.fail("needs a 4-d input");
  if (size.size() != 2) return ctx.fail("output_size needs 2 values");
  const int64_t n = in->size(0), c = in->size(1), in_h = in->size(2), in_w = in->size(3);
  const int64_t out_h = size[0], out_w = size[1];
  if (in_h <= 0 || in_w <= 0) return ctx.fail("the input's height and width must not be empty");
  if (out_h <= 0 || out_w <= 0 || out_h > (1 << 20) || out_w > (1 << 20))
    return ctx.fail(fmt::format("output size [{}, {}] is out of range", out_h, out_w));
  if (in->dtype() == ScalarType::kByte)
    return ctx.unsupported("uint8 input (PyTorch's fixed-point antialiasing)");
  if (in->dtype() != ScalarType::kFloat && in->dtype() != ScalarType::kDouble)
    return ctx.fail(fmt::format("dtype {} is not supported by PyTorch for this op",
                                scalar_type_name(in->dtype())));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{n, c, out_h, out_w}, 4}));
  if (out->numel() == 0) return Status();
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *in));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    const int64_t planes = n * c;
    const T* src = x;  // [planes, in_h, w] with w = in_w, then out_w
    if (out_w != in_w) {
      ET_ASSIGN_OR_RETURN(
          Taps<T> taps,
          compute_taps<T>(ctx, in_w, out_w, source_scale<T>(in_w, out_w, align_corners, scale_w)));
      T* dst = y;
      if (out_h != in_h) {
        ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({planes, in_h, out_w}, sizeof(T)));
        dst = static_cast<T*>(scratch);
      }
      for (int64_t row = 0; row < planes * in_h; ++row) {
        resample_line(src + row * in_w, 1, dst + row * out_w, 1, out_w, taps);
      }
      src = dst;
    }
    if (out_h != in_h) {
      ET_ASSIGN_OR_RETURN(
          Taps<T> taps,
          compute_taps<T>(ctx, in_h, out_h, source_scale<T>(in_h, out_h, align_corners, scale_h)));
      for (int64_t p = 0; p < planes; ++p) {
        for (int64_t col = 0; col < out_w; ++col) {
          resample_line(src + p * in_h * out_w + col, out_w, y + p * out_h * out_w + col, out_w,
                        out_h, taps);
        }
      }
    } else if (out_w == in_w) {
      std::copy(x, x + out->numel(), y);  // same size: nothing to resample
    }
    return store_dense<T>(ctx, y, *out);
  };
  return in->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::_upsample_bilinear2d_aa.out", upsample_bilinear2d_aa_out);

}  // namespace
}  // namespace et::kernels
