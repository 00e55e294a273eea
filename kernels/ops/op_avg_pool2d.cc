// aten::avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[],
//     int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True,
//     int? divisor_override=None, *, Tensor(a!) out)
#include "kernels/util/dense.h"
#include "kernels/util/pool.h"

namespace et::kernels {
namespace {

Status avg_pool2d_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto kernel, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(auto stride, ctx.int_list_arg(2));
  ET_ASSIGN_OR_RETURN(auto padding, ctx.int_list_arg(3));
  ET_ASSIGN_OR_RETURN(bool ceil_mode, ctx.bool_arg(4));
  ET_ASSIGN_OR_RETURN(bool count_include_pad, ctx.bool_arg(5));
  ET_ASSIGN_OR_RETURN(auto divisor_override, ctx.optional_int_arg(6));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(7));
  const int rank = self->dim();
  if (rank != 3 && rank != 4) return ctx.fail("avg_pool2d needs a 3-d or 4-d input");
  if (!is_floating(self->dtype())) return ctx.fail("avg_pool2d needs a floating-point input");
  if (divisor_override && *divisor_override == 0)
    return ctx.fail("divisor_override must not be zero");
  ET_ASSIGN_OR_RETURN(PoolGeometry g, pool_geometry(ctx, self->size(rank - 2), self->size(rank - 1),
                                                    kernel, stride, padding, {}, ceil_mode));
  Shape shape = shape_of(*self);
  shape.sizes[rank - 2] = g.out_h;
  shape.sizes[rank - 1] = g.out_w;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  const int64_t planes = self->numel() / (g.in_h * g.in_w);
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *self));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    for (int64_t p = 0; p < planes; ++p) {
      const T* plane = x + p * g.in_h * g.in_w;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const int64_t h0 = oh * g.s_h - g.p_h, w0 = ow * g.s_w - g.p_w;
          // The window clipped to input + padding, then to the input alone.
          const int64_t h_end = std::min(h0 + g.k_h, g.in_h + g.p_h),
                        w_end = std::min(w0 + g.k_w, g.in_w + g.p_w);
          const int64_t padded = (h_end - h0) * (w_end - w0);
          const int64_t hs = std::max<int64_t>(h0, 0), ws = std::max<int64_t>(w0, 0);
          const int64_t he = std::min(h_end, g.in_h), we = std::min(w_end, g.in_w);
          T sum = 0;
          for (int64_t ih = hs; ih < he; ++ih) {
            for (int64_t iw = ws; iw < we; ++iw) sum += plane[ih * g.in_w + iw];
          }
          const int64_t divisor = divisor_override    ? *divisor_override
                                  : count_include_pad ? padded
                                                      : (he - hs) * (we - ws);
          y[(p * g.out_h + oh) * g.out_w + ow] = sum / static_cast<T>(divisor);
        }
      }
    }
    return store_dense<T>(ctx, y, *out);
  };
  return self->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::avg_pool2d.out", avg_pool2d_out);

}  // namespace
}  // namespace et::kernels
