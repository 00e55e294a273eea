// aten::view_as_real_copy.out(Tensor self, *, Tensor(a!) out)
// A complex tensor's values as real pairs: complex64 [s...] -> float32 [s..., 2]
// (real, imaginary), complex128 -> float64.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"
#include "kernels/util/fft.h"

namespace et::kernels {
namespace {

Status view_as_real_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  ET_ASSIGN_OR_RETURN(ScalarType real, real_of(ctx, self->dtype()));
  if (out->dtype() != real) {
    return ctx.fail(fmt::format("out is {}; the real view of {} is {}",
                                scalar_type_name(out->dtype()), scalar_type_name(self->dtype()),
                                scalar_type_name(real)));
  }
  if (self->dim() + 1 > kMaxRank) return ctx.fail("the real view would be above the rank limit");
  Shape shape = shape_of(*self);
  shape.sizes[shape.rank++] = 2;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  // Each complex element is two reals next to each other: copy self's elements (in its
  // layout) into out's, whose trailing pair dim is innermost.
  std::array<int64_t, kMaxRank> out_strides{};
  for (int d = 0; d < self->dim(); ++d) {
    if (out->stride(d) % 2 != 0) return ctx.unsupported("an out layout that splits the pairs");
    out_strides[d] = out->stride(d) / 2;
  }
  if (out->stride(self->dim()) != 1) return ctx.unsupported("an out layout that splits the pairs");
  strided_copy(shape_of(*self), self->data(), self->strides().data(), out->mutable_data(),
               out_strides.data(), self->element_size());
  return Status();
}

ET_REGISTER_KERNEL("aten::view_as_real_copy.out", view_as_real_copy_out);

}  // namespace
}  // namespace et::kernels
