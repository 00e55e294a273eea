// aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[],
//     int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out,
//     Tensor(b!) indices)
// indices: the flat position (h * W + w) of each maximum in its input plane; NaN wins.
#include "kernels/util/dense.h"
#include "kernels/util/pool.h"

namespace et::kernels {
namespace {

Status max_pool2d_with_indices_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto kernel, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(auto stride, ctx.int_list_arg(2));
  ET_ASSIGN_OR_RETURN(auto padding, ctx.int_list_arg(3));
  ET_ASSIGN_OR_RETURN(auto dilation, ctx.int_list_arg(4));
  ET_ASSIGN_OR_RETURN(bool ceil_mode, ctx.bool_arg(5));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(6));
  ET_ASSIGN_OR_RETURN(Tensor * indices, ctx.output(7));
  const int rank = self->dim();
  if (rank != 3 && rank != 4) return ctx.fail("max_pool2d needs a 3-d or 4-d input");
  ET_ASSIGN_OR_RETURN(PoolGeometry g, pool_geometry(ctx, self->size(rank - 2), self->size(rank - 1),
                                                    kernel, stride, padding, dilation, ceil_mode));
  Shape shape = shape_of(*self);
  shape.sizes[rank - 2] = g.out_h;
  shape.sizes[rank - 1] = g.out_w;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  ET_RETURN_IF_ERROR(resize_output(ctx, *indices, shape));
  const int64_t planes = self->numel() / (g.in_h * g.in_w);
  return dispatch_compute(ctx, self->dtype(), [&](auto zero) -> Status {
    using C = std::conditional_t<std::is_same_v<decltype(zero), bool>, int64_t, decltype(zero)>;
    ET_ASSIGN_OR_RETURN(const C* x, dense_as<C>(ctx, *self));
    ET_ASSIGN_OR_RETURN(C * y, dense_result<C>(ctx, *out));
    ET_ASSIGN_OR_RETURN(int64_t * idx, dense_result<int64_t>(ctx, *indices));
    for (int64_t p = 0; p < planes; ++p) {
      const C* plane = x + p * g.in_h * g.in_w;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          C best{};
          int64_t best_index = -1;
          for (int64_t kh = 0; kh < g.k_h; ++kh) {
            const int64_t ih = oh * g.s_h - g.p_h + kh * g.d_h;
            if (ih < 0 || ih >= g.in_h) continue;
            for (int64_t kw = 0; kw < g.k_w; ++kw) {
              const int64_t iw = ow * g.s_w - g.p_w + kw * g.d_w;
              if (iw < 0 || iw >= g.in_w) continue;
              const C v = plane[ih * g.in_w + iw];
              bool better = best_index < 0 || v > best;
              if constexpr (std::is_floating_point_v<C>)
                better = better || (v != v && best == best);
              if (better) {
                best = v;
                best_index = ih * g.in_w + iw;
              }
            }
          }
          const int64_t o = (p * g.out_h + oh) * g.out_w + ow;
          y[o] = best;
          idx[o] = best_index;
        }
      }
    }
    ET_RETURN_IF_ERROR(store_dense<int64_t>(ctx, idx, *indices));
    return store_dense<C>(ctx, y, *out);
  });
}

ET_REGISTER_KERNEL("aten::max_pool2d_with_indices.out", max_pool2d_with_indices_out);

}  // namespace
}  // namespace et::kernels
