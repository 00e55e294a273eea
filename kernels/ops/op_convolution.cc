// aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
//     SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
//     SymInt groups, *, Tensor(a!) out)
// 1-d, 2-d and 3-d convolutions, grouped and depthwise, and their transposes, in any
// input and output dim order. Computes in float (double for float64) by im2col and GEMM.
#include <fmt/format.h>

#include <vector>

#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

struct ConvGeometry {
  int64_t batch, in_c, out_c, groups;
  // A 1-d convolution has d = h = 1 (kernel 1, stride 1, no padding); a 2-d one d = 1.
  int64_t in_d, in_h, in_w, out_d, out_h, out_w, k_d, k_h, k_w;
  int64_t stride_d, stride_h, stride_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w;
};

Result<int64_t> param(const KernelContext& ctx, std::span<const int64_t> list, int i, int spatial,
                      const char* name, int64_t fallback) {
  if (list.empty()) return fallback;
  if (list.size() == 1) return list[0];
  if (static_cast<int>(list.size()) != spatial) {
    return ctx.fail(
        fmt::format("{} has {} values for {} spatial dims", name, list.size(), spatial));
  }
  return list[i];
}

// Columns for one image and group: [in_c/groups * k_d * k_h * k_w, out_d * out_h * out_w].
template <typename T>
void im2col(const T* image, const ConvGeometry& g, int64_t c_begin, int64_t channels, T* columns) {
  const int64_t plane_size = g.out_h * g.out_w, spatial = g.out_d * plane_size;
  for (int64_t c = 0; c < channels; ++c) {
    const T* volume = image + (c_begin + c) * g.in_d * g.in_h * g.in_w;
    for (int64_t kd = 0; kd < g.k_d; ++kd) {
      for (int64_t kh = 0; kh < g.k_h; ++kh) {
        for (int64_t kw = 0; kw < g.k_w; ++kw) {
          T* row = columns + (((c * g.k_d + kd) * g.k_h + kh) * g.k_w + kw) * spatial;
          for (int64_t od = 0; od < g.out_d; ++od) {
            const int64_t id = od * g.stride_d - g.pad_d + kd * g.dil_d;
            T* row_d = row + od * plane_size;
            if (id < 0 || id >= g.in_d) {
              std::fill(row_d, row_d + plane_size, T(0));
              continue;
            }
            const T* plane = volume + id * g.in_h * g.in_w;
            for (int64_t oh = 0; oh < g.out_h; ++oh) {
              const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dil_h;
              for (int64_t ow = 0; ow < g.out_w; ++ow) {
                const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dil_w;
                row_d[oh * g.out_w + ow] = (ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w)
                                               ? plane[ih * g.in_w + iw]
                                               : T(0);
              }
            }
          }
        }
      }
    }
  }
}

// The transpose of im2col: adds columns back into image positions.
template <typename T>
void col2im(const T* columns, const ConvGeometry& g, int64_t channels, T* image) {
  // Here in_* is the (small) transposed-conv input and out_* the larger output.
  const int64_t in_plane = g.in_h * g.in_w, spatial = g.in_d * in_plane;
  for (int64_t c = 0; c < channels; ++c) {
    T* volume = image + c * g.out_d * g.out_h * g.out_w;
    for (int64_t kd = 0; kd < g.k_d; ++kd) {
      for (int64_t kh = 0; kh < g.k_h; ++kh) {
        for (int64_t kw = 0; kw < g.k_w; ++kw) {
          const T* row = columns + (((c * g.k_d + kd) * g.k_h + kh) * g.k_w + kw) * spatial;
          for (int64_t id = 0; id < g.in_d; ++id) {
            const int64_t od = id * g.stride_d - g.pad_d + kd * g.dil_d;
            if (od < 0 || od >= g.out_d) continue;
            T* plane = volume + od * g.out_h * g.out_w;
            const T* row_d = row + id * in_plane;
            for (int64_t ih = 0; ih < g.in_h; ++ih) {
              const int64_t oh = ih * g.stride_h - g.pad_h + kh * g.dil_h;
              if (oh < 0 || oh >= g.out_h) continue;
              for (int64_t iw = 0; iw < g.in_w; ++iw) {
                const int64_t ow = iw * g.stride_w - g.pad_w + kw * g.dil_w;
                if (ow >= 0 && ow < g.out_w) plane[oh * g.out_w + ow] += row_d[ih * g.in_w + iw];
              }
            }
          }
        }
      }
    }
  }
}

template <typename T>
Status convolve(const KernelContext& ctx, const Tensor& input, const Tensor& weight,
                const Tensor* bias, const ConvGeometry& g, bool transposed, Tensor& out) {
  ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, input));
  ET_ASSIGN_OR_RETURN(const T* w, dense_as<T>(ctx, weight));
  const T* b = nullptr;
  if (bias) {
    ET_ASSIGN_OR_RETURN(b, dense_as<T>(ctx, *bias));
  }
  ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, out));
  const int64_t in_cg = g.in_c / g.groups, out_cg = g.out_c / g.groups;
  const int64_t kernel = g.k_d * g.k_h * g.k_w;
  if (!transposed) {
    const int64_t spatial = g.out_d * g.out_h * g.out_w;
    const bool pointwise = kernel == 1 && g.stride_d == 1 && g.stride_h == 1 && g.stride_w == 1 &&
                           g.pad_d == 0 && g.pad_h == 0 && g.pad_w == 0;
    // One group at a time per thread (depthwise convolutions have as many groups as
    // channels); a single group splits its GEMM rows across the threads instead.
    auto run_group = [&](const T* image, int64_t n, int64_t grp, T* columns) {
      const T* cols = image + grp * in_cg * spatial;
      if (!pointwise) {
        im2col(image, g, grp * in_cg, in_cg, columns);
        cols = columns;
      }
      // [out_cg, in_cg*kernel] x [in_cg*kernel, spatial]
      const T* wg = w + grp * out_cg * in_cg * kernel;
      T* yg = y + (n * g.out_c + grp * out_cg) * spatial;
      if (g.groups == 1) {
        parallel_gemm<T>(out_cg, spatial, in_cg * kernel, wg, in_cg * kernel, cols, spatial, yg,
                         spatial, false);
      } else {
        gemm<T>(out_cg, spatial, in_cg * kernel, wg, in_cg * kernel, cols, spatial, yg, spatial,
                false);
      }
    };
    // Scratch comes from the instruction's arena (sizes overflow-checked and limited),
    // one column buffer per chunk of groups the pool may run at once.
    const int64_t column_count = pointwise ? 0 : in_cg * kernel * spatial;  // checked below
    const auto chunks_wanted =
        g.groups == 1 ? 1 : std::min<int64_t>(g.groups, ThreadPool::global().threads());
    const auto grain = (g.groups + chunks_wanted - 1) / chunks_wanted;
    const auto chunks = (g.groups + grain - 1) / grain;
    T* columns = nullptr;
    if (!pointwise) {
      ET_ASSIGN_OR_RETURN(void* scratch,
                          ctx.temp_product({chunks, in_cg, kernel, spatial}, sizeof(T)));
      columns = static_cast<T*>(scratch);
    }
    for (int64_t n = 0; n < g.batch; ++n) {
      const T* image = x + n * g.in_c * g.in_d * g.in_h * g.in_w;
      if (g.groups == 1) {
        run_group(image, n, 0, columns);
      } else {
        ThreadPool::global().parallel_for(
            static_cast<size_t>(g.groups), static_cast<size_t>(grain), [&](size_t g0, size_t g1) {
              T* own =
                  columns ? columns + static_cast<int64_t>(g0) / grain * column_count : nullptr;
              for (size_t grp = g0; grp < g1; ++grp)
                run_group(image, n, static_cast<int64_t>(grp), own);
            });
      }
      if (b) {
        for (int64_t c = 0; c < g.out_c; ++c) {
          T* plane = y + (n * g.out_c + c) * spatial;
          for (int64_t i = 0; i < spatial; ++i) plane[i] += b[c];
        }
      }
    }
    return store_dense<T>(ctx, y, out);
  }
  // Transposed: weight is [in_c, out_c/groups, (k_d,) k_h, k_w]; columns = W^T x, then col2im.
  const int64_t in_spatial = g.in_d * g.in_h * g.in_w, out_spatial = g.out_d * g.out_h * g.out_w;
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({out_cg, kernel, in_spatial}, sizeof(T)));
  T* columns = static_cast<T*>(scratch);
  ET_ASSIGN_OR_RETURN(void* wt_scratch, ctx.temp_product({out_cg, kernel, in_cg}, sizeof(T)));
  T* wt = static_cast<T*>(wt_scratch);
  std::fill(y, y + g.batch * g.out_c * out_spatial, T(0));
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    // wt[(oc*kernel + k), ic] = w[grp*in_cg + ic, oc, k]
    for (int64_t ic = 0; ic < in_cg; ++ic) {
      for (int64_t r = 0; r < out_cg * kernel; ++r) {
        wt[r * in_cg + ic] = w[(grp * in_cg + ic) * out_cg * kernel + r];
      }
    }
    for (int64_t n = 0; n < g.batch; ++n) {
      const T* image = x + (n * g.in_c + grp * in_cg) * in_spatial;
      gemm<T>(out_cg * kernel, in_spatial, in_cg, wt, in_cg, image, in_spatial, columns, in_spatial,
              false);
      col2im(columns, g, out_cg, y + (n * g.out_c + grp * out_cg) * out_spatial);
    }
  }
  if (b) {
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t c = 0; c < g.out_c; ++c) {
        T* plane = y + (n * g.out_c + c) * out_spatial;
        for (int64_t i = 0; i < out_spatial; ++i) plane[i] += b[c];
      }
    }
  }
  return store_dense<T>(ctx, y, out);
}

Status convolution_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* bias, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(auto stride, ctx.int_list_arg(3));
  ET_ASSIGN_OR_RETURN(auto padding, ctx.int_list_arg(4));
  ET_ASSIGN_OR_RETURN(auto dilation, ctx.int_list_arg(5));
  ET_ASSIGN_OR_RETURN(bool transposed, ctx.bool_arg(6));
  ET_ASSIGN_OR_RETURN(auto output_padding, ctx.int_list_arg(7));
  ET_ASSIGN_OR_RETURN(int64_t groups, ctx.int_arg(8));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(9));
  const int rank = input->dim();
  if (rank < 3 || rank > 5 || weight->dim() != rank) {
    return ctx.unsupported(
        fmt::format("a convolution of a rank-{} input with a rank-{} weight (1-d, 2-d and 3-d "
                    "are supported)",
                    rank, weight->dim()));
  }
  if (!is_floating(input->dtype())) return ctx.fail("convolution needs a floating-point input");
  const int spatial = rank - 2;
  ConvGeometry g{};
  g.batch = input->size(0);
  g.in_c = input->size(1);
  g.groups = groups;
  g.in_d = spatial == 3 ? input->size(2) : 1;
  g.in_h = spatial >= 2 ? input->size(rank - 2) : 1;
  g.in_w = input->size(rank - 1);
  g.k_d = spatial == 3 ? weight->size(2) : 1;
  g.k_h = spatial >= 2 ? weight->size(rank - 2) : 1;
  g.k_w = weight->size(rank - 1);
  // Index of each spatial dim in the parameter lists; -1 where the dim is implicit.
  const int d = spatial == 3 ? 0 : -1, h = spatial >= 2 ? spatial - 2 : -1, w = spatial - 1;
  ET_ASSIGN_OR_RETURN(g.stride_w, param(ctx, stride, w, spatial, "stride", 1));
  ET_ASSIGN_OR_RETURN(g.pad_w, param(ctx, padding, w, spatial, "padding", 0));
  ET_ASSIGN_OR_RETURN(g.dil_w, param(ctx, dilation, w, spatial, "dilation", 1));
  ET_ASSIGN_OR_RETURN(int64_t out_pad_w,
                      param(ctx, output_padding, w, spatial, "output_padding", 0));
  int64_t out_pad_h = 0, out_pad_d = 0;
  g.stride_h = g.dil_h = g.stride_d = g.dil_d = 1;
  if (d >= 0) {
    ET_ASSIGN_OR_RETURN(g.stride_d, param(ctx, stride, d, spatial, "stride", 1));
    ET_ASSIGN_OR_RETURN(g.pad_d, param(ctx, padding, d, spatial, "padding", 0));
    ET_ASSIGN_OR_RETURN(g.dil_d, param(ctx, dilation, d, spatial, "dilation", 1));
    ET_ASSIGN_OR_RETURN(out_pad_d, param(ctx, output_padding, d, spatial, "output_padding", 0));
  }
  if (h >= 0) {
    ET_ASSIGN_OR_RETURN(g.stride_h, param(ctx, stride, h, spatial, "stride", 1));
    ET_ASSIGN_OR_RETURN(g.pad_h, param(ctx, padding, h, spatial, "padding", 0));
    ET_ASSIGN_OR_RETURN(g.dil_h, param(ctx, dilation, h, spatial, "dilation", 1));
    ET_ASSIGN_OR_RETURN(out_pad_h, param(ctx, output_padding, h, spatial, "output_padding", 0));
  }
  // Bounded before any arithmetic: the values come from the program.
  constexpr int64_t kMaxParam = int64_t{1} << 20;
  auto in_range = [&](int64_t v, int64_t lo) { return v >= lo && v <= kMaxParam; };
  if (!in_range(groups, 1) || g.in_c % groups != 0 || !in_range(g.stride_d, 1) ||
      !in_range(g.stride_h, 1) || !in_range(g.stride_w, 1) || !in_range(g.dil_d, 1) ||
      !in_range(g.dil_h, 1) || !in_range(g.dil_w, 1) || !in_range(g.pad_d, 0) ||
      !in_range(g.pad_h, 0) || !in_range(g.pad_w, 0) || !in_range(out_pad_d, 0) ||
      !in_range(out_pad_h, 0) || !in_range(out_pad_w, 0)) {
    return ctx.fail("invalid groups, stride, padding, dilation or output_padding");
  }
  if (!transposed) {
    g.out_c = weight->size(0);
    if (weight->size(1) * groups != g.in_c || g.out_c % groups != 0) {
      return ctx.fail(fmt::format("weight {} does not fit input {} with {} groups",
                                  shape_string(weight->sizes()), shape_string(input->sizes()),
                                  groups));
    }
    g.out_d = (g.in_d + 2 * g.pad_d - g.dil_d * (g.k_d - 1) - 1) / g.stride_d + 1;
    g.out_h = (g.in_h + 2 * g.pad_h - g.dil_h * (g.k_h - 1) - 1) / g.stride_h + 1;
    g.out_w = (g.in_w + 2 * g.pad_w - g.dil_w * (g.k_w - 1) - 1) / g.stride_w + 1;
  } else {
    g.out_c = weight->size(1) * groups;
    if (weight->size(0) != g.in_c)
      return ctx.fail("transposed weight's first dim must equal input channels");
    g.out_d = (g.in_d - 1) * g.stride_d - 2 * g.pad_d + g.dil_d * (g.k_d - 1) + out_pad_d + 1;
    g.out_h = (g.in_h - 1) * g.stride_h - 2 * g.pad_h + g.dil_h * (g.k_h - 1) + out_pad_h + 1;
    g.out_w = (g.in_w - 1) * g.stride_w - 2 * g.pad_w + g.dil_w * (g.k_w - 1) + out_pad_w + 1;
  }
  if (g.out_d <= 0 || g.out_h <= 0 || g.out_w <= 0) return ctx.fail("the output would be empty");
  if (bias && bias->numel() != g.out_c)
    return ctx.fail("bias does not have one value per output channel");
  Shape shape;
  shape.rank = rank;
  shape.sizes[0] = g.batch;
  shape.sizes[1] = g.out_c;
  if (spatial == 3) shape.sizes[2] = g.out_d;
  if (spatial >= 2) shape.sizes[rank - 2] = g.out_h;
  shape.sizes[rank - 1] = g.out_w;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (input->dtype() == ScalarType::kDouble) {
    return convolve<double>(ctx, *input, *weight, bias, g, transposed, *out);
  }
  return convolve<float>(ctx, *input, *weight, bias, g, transposed, *out);
}

ET_REGISTER_KERNEL("aten::convolution.out", convolution_out);

}  // namespace
}  // namespace et::kernels
