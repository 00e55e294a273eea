// aten::masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out)
// The elements of self where the mask is true (both broadcast together), in row-major
// order, as a 1-d tensor. The output's size depends on the mask: out is resized within
// its capacity.
#include <fmt/format.h>

#include <cstring>

#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status masked_select_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* mask, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (mask->dtype() != ScalarType::kBool) return ctx.fail("the mask must be a bool tensor");
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  ET_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(ctx, *self, *mask));
  const auto self_strides = broadcast_strides(*self, shape.rank);
  const auto mask_strides = broadcast_strides(*mask, shape.rank);
  const auto* m = mask->data_as<const Bool8>();
  int64_t count = 0;
  const std::array<const int64_t*, 1> mask_only = {mask_strides.data()};
  for_each_index<1>(shape, mask_only,
                    [&](const std::array<int64_t, 1>& i) { count += static_cast<bool>(m[i[0]]); });
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{count}, 1}));
  if (count == 0) return Status();
  const int64_t elsize = static_cast<int64_t>(out->element_size());
  const auto* in = static_cast<const uint8_t*>(self->data());
  auto* o = static_cast<uint8_t*>(out->mutable_data());
  const int64_t out_stride = out->stride(0);
  int64_t next = 0;
  const std::array<const int64_t*, 2> strides = {self_strides.data(), mask_strides.data()};
  for_each_index<2>(shape, strides, [&](const std::array<int64_t, 2>& i) {
    if (!static_cast<bool>(m[i[1]])) return;
    std::memmove(o + next * out_stride * elsize, in + i[0] * elsize, static_cast<size_t>(elsize));
    ++next;
  });
  return Status();
}

ET_REGISTER_KERNEL("aten::masked_select.out", masked_select_out);

}  // namespace
}  // namespace et::kernels
