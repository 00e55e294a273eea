// aten::masked_scatter.out(Tensor self, Tensor mask, Tensor source, *, Tensor(a!) out)
// out = self and mask broadcast together; where the mask is true, out takes the next
// element of source, read in row-major order.
#include <fmt/format.h>

#include <cstring>

#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status masked_scatter_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* mask, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* source, ctx.input(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (mask->dtype() != ScalarType::kBool) return ctx.fail("the mask must be a bool tensor");
  if (self->dtype() != source->dtype() || self->dtype() != out->dtype()) {
    return ctx.fail(fmt::format("self, source and out must have one dtype, got {}, {} and {}",
                                scalar_type_name(self->dtype()), scalar_type_name(source->dtype()),
                                scalar_type_name(out->dtype())));
  }
  ET_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(ctx, *self, *mask));
  const auto self_strides = broadcast_strides(*self, shape.rank);
  const auto mask_strides = broadcast_strides(*mask, shape.rank);
  const auto* m = mask->data_as<const Bool8>();
  int64_t count = 0;
  const std::array<const int64_t*, 1> mask_only = {mask_strides.data()};
  for_each_index<1>(shape, mask_only,
                    [&](const std::array<int64_t, 1>& i) { count += static_cast<bool>(m[i[0]]); });
  if (count > source->numel()) {
    return ctx.fail(
        fmt::format("source has {} elements for {} true mask elements", source->numel(), count));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  const int64_t elsize = static_cast<int64_t>(out->element_size());
  const auto* in = static_cast<const uint8_t*>(self->data());
  auto* o = static_cast<uint8_t*>(out->mutable_data());
  const std::array<const int64_t*, 2> copy_strides = {self_strides.data(), out->strides().data()};
  for_each_index<2>(shape, copy_strides, [&](const std::array<int64_t, 2>& i) {
    std::memmove(o + i[1] * elsize, in + i[0] * elsize, static_cast<size_t>(elsize));
  });
  if (count == 0) return Status();
  // Source elements in row-major order.
  const uint8_t* src = static_cast<const uint8_t*>(source->data());
  if (!source->is_contiguous()) {
    ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(source->nbytes()));
    const Shape s = shape_of(*source);
    strided_copy(s, source->data(), source->strides().data(), scratch, row_major_strides(s).data(),
                 source->element_size());
    src = static_cast<const uint8_t*>(scratch);
  }
  int64_t next = 0;
  const std::array<const int64_t*, 2> write_strides = {mask_strides.data(), out->strides().data()};
  for_each_index<2>(shape, write_strides, [&](const std::array<int64_t, 2>& i) {
    if (!static_cast<bool>(m[i[0]])) return;
    std::memmove(o + i[1] * elsize, src + next * elsize, static_cast<size_t>(elsize));
    ++next;
  });
  return Status();
}

ET_REGISTER_KERNEL("aten::masked_scatter.out", masked_scatter_out);

}  // namespace
}  // namespace et::kernels
