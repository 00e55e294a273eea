// aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out)
// Advanced indexing (advanced_index.h): None, integer index tensors and bool masks,
// as in NumPy/PyTorch. With a mask the result's size depends on the data.
#include <cstring>

#include "kernels/util/advanced_index.h"
#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status index_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto list, ctx.tensor_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  ET_ASSIGN_OR_RETURN(AdvancedIndex plan, plan_advanced_index(ctx, *self, list, self->strides()));
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, plan.result));
  const size_t elsize = self->element_size();
  const auto* in = static_cast<const uint8_t*>(self->data());
  auto* o = static_cast<uint8_t*>(out->mutable_data());
  int64_t n = 0;
  const std::array<const int64_t*, 1> strides = {out->strides().data()};
  for_each_index<1>(plan.result, strides, [&](const std::array<int64_t, 1>& off) {
    std::memmove(o + off[0] * static_cast<int64_t>(elsize),
                 in + plan.offsets[n++] * static_cast<int64_t>(elsize), elsize);
  });
  return Status();
}

ET_REGISTER_KERNEL("aten::index.Tensor_out", index_tensor_out);

}  // namespace
}  // namespace et::kernels
