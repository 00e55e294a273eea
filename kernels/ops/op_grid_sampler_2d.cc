// aten::grid_sampler_2d.out(Tensor input, Tensor grid, int interpolation_mode,
//     int padding_mode, bool align_corners, *, Tensor(a!) out)
// F.grid_sample on a 4-d input: out[n, c, h, w] samples input[n, c] at the point
// grid[n, h, w] = (x, y), normalised to [-1, 1]. Interpolation 0 bilinear, 1 nearest,
// 2 bicubic; padding 0 zeros, 1 border, 2 reflection.
//
// The arithmetic follows PyTorch's vectorized CPU kernel step by step, so the edge
// cases come out as there: a NaN or infinite coordinate is clipped to 0 by border and
// reflection padding (reflection first turns infinity into NaN); with zeros padding it
// reads nothing, and bilinear and bicubic weights made of it give NaN, nearest gives 0.
// Coordinates far outside the input read nothing (zeros) or the edge (border). float16
// and bfloat16 round every intermediate to their own precision, as that kernel does.
#include <fmt/format.h>

#include <cmath>
#include <type_traits>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

// A number computed in float and rounded to H after every operation.
template <typename H>
struct Rounded {
  float v = 0;
  Rounded() = default;
  explicit Rounded(double x) : v(static_cast<float>(H(convert_value<float>(x)))) {}
  static Rounded of(float x) { return Rounded(x); }
  friend Rounded operator+(Rounded a, Rounded b) { return of(a.v + b.v); }
  friend Rounded operator-(Rounded a, Rounded b) { return of(a.v - b.v); }
  friend Rounded operator*(Rounded a, Rounded b) { return of(a.v * b.v); }
  friend Rounded operator/(Rounded a, Rounded b) { return of(a.v / b.v); }
};

// The compute type of each storage type: float and double compute in themselves.
template <typename T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<Half> {
  using type = Rounded<Half>;
};
template <>
struct ComputeOf<BFloat16> {
  using type = Rounded<BFloat16>;
};

template <typename R>
double value_of(R x) {
  if constexpr (std::is_floating_point_v<R>) {
    return x;
  } else {
    return x.v;
  }
}
// Functions whose results are exact in every type (no rounding needed).
template <typename R>
R apply_exact(R x, double (*fn)(double)) {
  return R(fn(value_of(x)));
}
template <typename R>
R floor_of(R x) {
  return apply_exact(x, [](double d) { return std::floor(d); });
}
template <typename R>
R trunc_of(R x) {
  return apply_exact(x, [](double d) { return std::trunc(d); });
}
template <typename R>
R abs_of(R x) {
  return apply_exact(x, [](double d) { return std::fabs(d); });
}
template <typename R>
R round_half_even(R x) {
  return apply_exact(x, [](double d) { return std::nearbyint(d); });
}
template <typename R>
bool is_nan(R x) {
  return std::isnan(value_of(x));
}
// The vectorized kernel's minimum: NaN when either is NaN.
template <typename R>
R minimum_of(R a, R b) {
  if (is_nan(a) || is_nan(b)) return R(std::nan(""));
  return value_of(a) < value_of(b) ? a : b;
}
// Truncation to an index; NaN and values beyond int64 give INT64_MIN, which no bounds
// check accepts (PyTorch's conversion gives its integer type's minimum).
template <typename R>
int64_t index_of(R x) {
  return convert_value<int64_t>(value_of(x));
}

// Grid coordinates to input coordinates along one dim of `size` (> 0).
template <typename R>
struct Axis {
  int64_t size;
  bool align_corners;
  int padding;  // 0 zeros, 1 border, 2 reflection
  R scale, max_val, twice_span, low;

  Axis(int64_t n, bool align, int pad)
      : size(n),
        align_corners(align),
        padding(pad),
        scale(align ? R(static_cast<double>(n - 1)) / R(2) : R(static_cast<double>(n)) / R(2)),
        max_val(R(static_cast<double>(n - 1))),
        twice_span(align ? R(static_cast<double>(n - 1)) * R(2) : R(static_cast<double>(n)) * R(2)),
        low(align ? R(0) : R(-0.5)) {}

  R unnormalize(R g) const {
    const R u = (g + R(1)) * scale;
    return align_corners ? u : u - R(0.5);
  }
  // Into [0, size - 1]; NaN becomes 0.
  R clip(R x) const {
    const R lo = value_of(x) > 0 ? x : R(0);
    return value_of(lo) < value_of(max_val) ? lo : max_val;
  }
  R reflect(R x) const {
    if (align_corners && size <= 1) return R(0);
    const R a = abs_of(x - low);
    const R flips = trunc_of(a / twice_span);
    const R extra = a - flips * twice_span;
    const R folded = minimum_of(extra, twice_span - extra);
    return align_corners ? folded : folded + low;
  }
  // Padding applied to an input coordinate.
  R pad(R x) const {
    if (padding == 1) return clip(x);
    if (padding == 2) return clip(reflect(x));
    return x;
  }
  R apply(R g) const { return pad(unnormalize(g)); }
};

// Samples one channel plane. C is the storage type of the dense copies.
template <typename R, typename C>
struct Plane {
  const C* data;
  int64_t h, w;
  R at(int64_t iy, int64_t ix) const {
    if (iy < 0 || iy >= h || ix < 0 || ix >= w) return R(0);
    return R(static_cast<double>(data[iy * w + ix]));
  }
};

// Cubic convolution weights (A = -0.75) of the four taps around a point t in [0, 1).
template <typename R>
void cubic_weights(R t, R (&c)[4]) {
  const R a(-0.75), five_a(-3.75), eight_a(-6.0), four_a(-3.0), a2(1.25), a3(2.25), one(1);
  auto outer = [&](R x) { return ((a * x - five_a) * x + eight_a) * x - four_a; };
  auto inner = [&](R x) { return (a2 * x - a3) * x * x + one; };
  c[0] = outer(t + one);
  c[1] = inner(t);
  c[2] = inner(one - t);
  c[3] = outer(R(2) - t);
}

Status grid_sampler_2d_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* grid, ctx.input(1));
  ET_ASSIGN_OR_RETURN(int64_t interpolation, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(int64_t padding, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(bool align_corners, ctx.bool_arg(4));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(5));
  if (input->dim() != 4 || grid->dim() != 4 || grid->size(3) != 2 ||
      grid->size(0) != input->size(0)) {
    return ctx.fail(fmt::format("needs a 4-d input and an [N, H, W, 2] grid, got {} and {}",
                                shape_string(input->sizes()), shape_string(grid->sizes())));
  }
  if (input->size(2) <= 0 || input->size(3) <= 0)
    return ctx.fail("the input's spatial dims must not be empty");
  if (!is_floating(input->dtype()) || grid->dtype() != input->dtype())
    return ctx.fail("input and grid must have the same floating-point dtype");
  if (interpolation < 0 || interpolation > 2)
    return ctx.unsupported(fmt::format("interpolation mode {}", interpolation));
  if (padding < 0 || padding > 2) return ctx.unsupported(fmt::format("padding mode {}", padding));
  const int64_t n = input->size(0), channels = input->size(1), in_h = input->size(2),
                in_w = input->size(3), out_h = grid->size(1), out_w = grid->size(2);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{n, channels, out_h, out_w}, 4}));
  if (out->numel() == 0) return Status();

  auto run = [&](auto storage) -> Status {
    using T = decltype(storage);
    using R = typename ComputeOf<T>::type;
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    ET_ASSIGN_OR_RETURN(const C* x, dense_as<C>(ctx, *input));
    ET_ASSIGN_OR_RETURN(const C* g, dense_as<C>(ctx, *grid));
    ET_ASSIGN_OR_RETURN(C * y, dense_result<C>(ctx, *out));
    const Axis<R> ax(in_w, align_corners, static_cast<int>(padding));
    const Axis<R> ay(in_h, align_corners, static_cast<int>(padding));
    const int64_t plane = in_h * in_w, out_plane = out_h * out_w;
    // One output point of every channel of batch b.
    auto sample = [&](int64_t b, int64_t p) {
      const R gx(static_cast<double>(g[(b * out_plane + p) * 2]));
      const R gy(static_cast<double>(g[(b * out_plane + p) * 2 + 1]));
      for (int64_t c = 0; c < channels; ++c) {
        const Plane<R, C> src{x + (b * channels + c) * plane, in_h, in_w};
        R result(0);
        if (interpolation == 0) {
          const R px = ax.apply(gx), py = ay.apply(gy);
          const R fx = floor_of(px), fy = floor_of(py);
          const R wx = px - fx, ex = R(1) - wx, ny = py - fy, sy = R(1) - ny;
          const int64_t ix = index_of(fx), iy = index_of(fy);
          // ix + 1 cannot overflow: an index this large is out of bounds already.
          const int64_t ix1 = ix < in_w ? ix + 1 : ix, iy1 = iy < in_h ? iy + 1 : iy;
          result = src.at(iy, ix) * (sy * ex) + src.at(iy, ix1) * (sy * wx) +
                   src.at(iy1, ix) * (ny * ex) + src.at(iy1, ix1) * (ny * wx);
        } else if (interpolation == 1) {
          const int64_t ix = index_of(round_half_even(ax.apply(gx)));
          const int64_t iy = index_of(round_half_even(ay.apply(gy)));
          result = src.at(iy, ix);
        } else {
          const R px = ax.unnormalize(gx), py = ay.unnormalize(gy);
          const R fx = floor_of(px), fy = floor_of(py);
          R cx[4], cy[4];
          cubic_weights(px - fx, cx);
          cubic_weights(py - fy, cy);
          auto tap = [&](R tx, R ty) { return src.at(index_of(ay.pad(ty)), index_of(ax.pad(tx))); };
          R rows[4];
          for (int i = 0; i < 4; ++i) {
            const R ty = fy + R(static_cast<double>(i - 1));
            rows[i] = cx[0] * tap(fx - R(1), ty) + cx[1] * tap(fx, ty) +
                      cx[2] * tap(fx + R(1), ty) + cx[3] * tap(fx + R(2), ty);
          }
          result = cy[0] * rows[0] + cy[1] * rows[1] + cy[2] * rows[2] + cy[3] * rows[3];
        }
        y[(b * channels + c) * out_plane + p] = static_cast<C>(value_of(result));
      }
    };
    const size_t points = static_cast<size_t>(n * out_plane);
    ThreadPool::global().parallel_for(points, 256, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        sample(static_cast<int64_t>(i) / out_plane, static_cast<int64_t>(i) % out_plane);
      }
    });
    return store_dense<C>(ctx, y, *out);
  };
  switch (input->dtype()) {
    case ScalarType::kDouble:
      return run(double{});
    case ScalarType::kHalf:
      return run(Half{});
    case ScalarType::kBFloat16:
      return run(BFloat16{});
    default:
      return run(float{});
  }
}

ET_REGISTER_KERNEL("aten::grid_sampler_2d.out", grid_sampler_2d_out);

}  // namespace
}  // namespace et::kernels
