// aten::_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out)
// Window i covers [floor(i * in / out), ceil((i + 1) * in / out)).
#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

Status adaptive_avg_pool2d_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto output_size, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  const int rank = self->dim();
  if ((rank != 3 && rank != 4) || output_size.size() != 2 || output_size[0] <= 0 ||
      output_size[1] <= 0) {
    return ctx.fail("needs a 3-d or 4-d input and a positive 2-value output_size");
  }
  if (!is_floating(self->dtype()))
    return ctx.fail("adaptive average pooling needs a floating-point input");
  const int64_t in_h = self->size(rank - 2), in_w = self->size(rank - 1);
  const int64_t out_h = output_size[0], out_w = output_size[1];
  Shape shape = shape_of(*self);
  shape.sizes[rank - 2] = out_h;
  shape.sizes[rank - 1] = out_w;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  const int64_t planes = in_h * in_w == 0 ? 0 : self->numel() / (in_h * in_w);
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* x, dense_as<T>(ctx, *self));
    ET_ASSIGN_OR_RETURN(T * y, dense_result<T>(ctx, *out));
    for (int64_t p = 0; p < planes; ++p) {
      const T* plane = x + p * in_h * in_w;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const int64_t h0 = oh * in_h / out_h, h1 = ((oh + 1) * in_h + out_h - 1) / out_h;
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const int64_t w0 = ow * in_w / out_w, w1 = ((ow + 1) * in_w + out_w - 1) / out_w;
          T sum = 0;
          for (int64_t ih = h0; ih < h1; ++ih) {
            for (int64_t iw = w0; iw < w1; ++iw) sum += plane[ih * in_w + iw];
          }
          y[(p * out_h + oh) * out_w + ow] = sum / static_cast<T>((h1 - h0) * (w1 - w0));
        }
      }
    }
    return store_dense<T>(ctx, y, *out);
  };
  return self->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::_adaptive_avg_pool2d.out", adaptive_avg_pool2d_out);

}  // namespace
}  // namespace et::kernels
