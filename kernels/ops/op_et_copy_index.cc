// executorch_prim::et_copy_index.tensor(Tensor(a!) copy_to, Tensor copy_from, int index)
// copy_to[index] = copy_from: how the exporter's loops (torch map, scan) stack each
// iteration's result. copy_to has one dim more than copy_from; when it may resize
// (dynamic), it is grown to [index + 1, *copy_from.shape] as the loop goes on, so a
// loop over a dynamic dim ends with the right shape. A static copy_to must already
// hold row `index` with copy_from's shape.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status et_copy_index(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(Tensor * copy_to, ctx.output(0));
  ET_ASSIGN_OR_RETURN(const Tensor* copy_from, ctx.input(1));
  ET_ASSIGN_OR_RETURN(int64_t index, ctx.int_arg(2));
  if (copy_to->dtype() != copy_from->dtype()) {
    return ctx.fail(fmt::format("copy_to is {} but copy_from is {}",
                                scalar_type_name(copy_to->dtype()),
                                scalar_type_name(copy_from->dtype())));
  }
  if (copy_to->dim() != copy_from->dim() + 1) {
    return ctx.fail(fmt::format("copy_to {} must have one dim more than copy_from {}",
                                shape_string(copy_to->sizes()), shape_string(copy_from->sizes())));
  }
  if (index < 0 || index >= copy_to->max_sizes()[0]) {
    return ctx.fail(fmt::format("index {} is out of range for copy_to {}", index,
                                shape_string(copy_to->max_sizes())));
  }
  if (copy_to->dynamism() != ShapeDynamism::kStatic) {
    Shape grown;
    grown.rank = copy_to->dim();
    grown.sizes[0] = index + 1;
    for (int d = 0; d < copy_from->dim(); ++d) grown.sizes[d + 1] = copy_from->size(d);
    ET_RETURN_IF_ERROR(resize_output(ctx, *copy_to, grown));
  }
  for (int d = 0; d < copy_from->dim(); ++d) {
    if (copy_to->size(d + 1) != copy_from->size(d)) {
      return ctx.fail(fmt::format("copy_to {} does not hold rows of shape {}",
                                  shape_string(copy_to->sizes()),
                                  shape_string(copy_from->sizes())));
    }
  }
  if (index >= copy_to->size(0)) {
    return ctx.fail(fmt::format("index {} is out of range for copy_to {}", index,
                                shape_string(copy_to->sizes())));
  }
  if (copy_from->numel() == 0) return Status();
  if (copy_to->data() == nullptr) return ctx.fail("copy_to has no memory");
  auto* dst = static_cast<uint8_t*>(copy_to->mutable_data()) +
              index * copy_to->stride(0) * static_cast<int64_t>(copy_to->element_size());
  strided_copy(shape_of(*copy_from), copy_from->data(), copy_from->strides().data(), dst,
               copy_to->strides().data() + 1, copy_to->element_size());
  return Status();
}

ET_REGISTER_KERNEL("executorch_prim::et_copy_index.tensor", et_copy_index);

}  // namespace
}  // namespace et::kernels
