// aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out)
// Operands are promoted to out's dtype; 1-d empty tensors are skipped, as in PyTorch.
#include <fmt/format.h>

#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"
#include "kernels/util/type_promotion.h"

namespace et::kernels {
namespace {

Status cat_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(auto tensors, ctx.tensor_list_arg(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  const Tensor* first = nullptr;
  ResultType result;
  for (const Tensor* t : tensors) {
    if (t == nullptr) return ctx.fail("a tensor in the list is missing");
    if (t->data() == nullptr && t->numel() > 0)
      return ctx.fail("a tensor in the list has no memory");
    result.add(*t);
    if (t->dim() == 1 && t->numel() == 0) continue;
    if (first == nullptr) first = t;
  }
  if (first == nullptr) {
    ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{0}, 1}));
    return Status();
  }
  if (!can_cast(result.get(), out->dtype())) {
    return ctx.fail(fmt::format("cannot write {} into an output of {}",
                                scalar_type_name(result.get()), scalar_type_name(out->dtype())));
  }
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, first->dim()));
  Shape shape = shape_of(*first);
  shape.sizes[dim] = 0;
  for (const Tensor* t : tensors) {
    if (t->dim() == 1 && t->numel() == 0) continue;
    if (t->dim() != first->dim()) return ctx.fail("tensors have different ranks");
    for (int d = 0; d < t->dim(); ++d) {
      if (d != dim && t->size(d) != first->size(d)) {
        return ctx.fail(fmt::format("shapes {} and {} differ outside dim {}",
                                    shape_string(first->sizes()), shape_string(t->sizes()), dim));
      }
    }
    shape.sizes[dim] += t->size(dim);
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  int64_t offset = 0;
  for (const Tensor* t : tensors) {
    if (t->dim() == 1 && t->numel() == 0) continue;  // the legacy empty tensor
    if (t->numel() > 0) {
      auto* dst = static_cast<uint8_t*>(out->mutable_data()) +
                  offset * out->stride(dim) * static_cast<int64_t>(out->element_size());
      const Shape part = shape_of(*t);
      if (t->dtype() == out->dtype()) {
        strided_copy(part, t->data(), t->strides().data(), dst, out->strides().data(),
                     t->element_size());
      } else if (!convert_strided(part, t->dtype(), t->data(), t->strides().data(), out->dtype(),
                                  dst, out->strides().data())) {
        return ctx.unsupported(
            fmt::format("dtype {} is not supported", scalar_type_name(t->dtype())));
      }
    }
    offset += t->size(dim);
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::cat.out", cat_out);

}  // namespace
}  // namespace et::kernels
