// aten::relu.out(Tensor self, *, Tensor(a!) out)
#include "kernels/dispatch.h"
#include "kernels/shape_util.h"

namespace et::kernels {
namespace {

Status relu_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  Shape shape;
  shape.rank = self->dim();
  for (int d = 0; d < shape.rank; ++d) shape.sizes[d] = self->size(d);
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  return dispatch_real(ctx, self->dtype(), [&](auto zero) -> Status {
    using T = decltype(zero);
    const T* in = self->data_as<const T>();
    T* o = out->data_as<T>();
    const std::array<const int64_t*, 2> strides = {self->strides().data(), out->strides().data()};
    for_each_index<2>(shape, strides, [&](const std::array<int64_t, 2>& i) {
      const T x = in[i[0]];
      o[i[1]] = x > zero ? x : zero;  // NaN stays NaN, as in PyTorch
      if (x != x) o[i[1]] = x;
    });
    return Status();
  });
}

ET_REGISTER_KERNEL("aten::relu.out", relu_out);

}  // namespace
}  // namespace et::kernels
