// aten::max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self,
//     int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode,
//     Tensor indices, *, Tensor(a!) grad_input)
// grad_input (shaped like self, 3-d or 4-d) is zero except where max_pool2d took its
// maxima: each grad_output value is added at the flat plane position (h * W + w) its
// index names. An index of -1 (a window with no input) adds nothing, as in PyTorch; any
// other index outside the plane fails the call (PyTorch would write out of bounds).
#include <fmt/format.h>

#include <algorithm>

#include "kernels/util/dense.h"
#include "kernels/util/pool.h"

namespace et::kernels {
namespace {

Status max_pool2d_with_indices_backward_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* grad_out, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(1));
  ET_ASSIGN_OR_RETURN(auto kernel, ctx.int_list_arg(2));
  ET_ASSIGN_OR_RETURN(auto stride, ctx.int_list_arg(3));
  ET_ASSIGN_OR_RETURN(auto padding, ctx.int_list_arg(4));
  ET_ASSIGN_OR_RETURN(auto dilation, ctx.int_list_arg(5));
  ET_ASSIGN_OR_RETURN(bool ceil_mode, ctx.bool_arg(6));
  ET_ASSIGN_OR_RETURN(const Tensor* indices, ctx.input(7));
  ET_ASSIGN_OR_RETURN(Tensor * grad_input, ctx.output(8));
  const int rank = self->dim();
  if (rank != 3 && rank != 4) return ctx.fail("max_pool2d needs a 3-d or 4-d input");
  if (!is_floating(self->dtype()) || grad_out->dtype() != self->dtype())
    return ctx.fail("grad_output and self need the same floating-point dtype");
  if (indices->dtype() != ScalarType::kLong) return ctx.fail("indices must be int64");
  ET_ASSIGN_OR_RETURN(PoolGeometry g, pool_geometry(ctx, self->size(rank - 2), self->size(rank - 1),
                                                    kernel, stride, padding, dilation, ceil_mode));
  Shape pooled = shape_of(*self);
  pooled.sizes[rank - 2] = g.out_h;
  pooled.sizes[rank - 1] = g.out_w;
  const std::span<const int64_t> want = pooled.view();
  auto matches = [&](const Tensor& t) {
    return t.dim() == rank && std::equal(want.begin(), want.end(), t.sizes().begin());
  };
  if (!matches(*grad_out) || !matches(*indices)) {
    return ctx.fail(fmt::format("grad_output {} and indices {} must have the pooled shape {}",
                                shape_string(grad_out->sizes()), shape_string(indices->sizes()),
                                shape_string(want)));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *grad_input, shape_of(*self)));
  if (grad_input->numel() == 0) return Status();
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  const int64_t planes = self->numel() / in_plane;
  auto run = [&](auto zero) -> Status {
    using T = decltype(zero);
    ET_ASSIGN_OR_RETURN(const T* gy, dense_as<T>(ctx, *grad_out));
    ET_ASSIGN_OR_RETURN(const int64_t* idx, dense_as<int64_t>(ctx, *indices));
    ET_ASSIGN_OR_RETURN(T * gx, dense_result<T>(ctx, *grad_input));
    std::fill(gx, gx + grad_input->numel(), T(0));
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t o = 0; o < out_plane; ++o) {
        const int64_t i = idx[p * out_plane + o];
        if (i == -1) continue;
        if (i < 0 || i >= in_plane) {
          return ctx.fail(
              fmt::format("index {} is outside the {}x{} input plane", i, g.in_h, g.in_w));
        }
        gx[p * in_plane + i] += gy[p * out_plane + o];
      }
    }
    return store_dense<T>(ctx, gx, *grad_input);
  };
  return self->dtype() == ScalarType::kDouble ? run(double{}) : run(float{});
}

ET_REGISTER_KERNEL("aten::max_pool2d_with_indices_backward.grad_input",
                   max_pool2d_with_indices_backward_out);

}  // namespace
}  // namespace et::kernels
