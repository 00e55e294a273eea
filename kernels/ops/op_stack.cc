// aten::stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out)
// Tensors of one shape joined along a new dim; operands are promoted to out's dtype
// as cat does.
#include <fmt/format.h>

#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"
#include "kernels/util/type_promotion.h"

namespace et::kernels {
namespace {

Status stack_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(auto tensors, ctx.tensor_list_arg(0));
  ET_ASSIGN_OR_RETURN(int64_t dim_arg, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (tensors.empty()) return ctx.fail("stack expects a non-empty list of tensors");
  ResultType result;
  for (const Tensor* t : tensors) {
    if (t == nullptr) return ctx.fail("a tensor in the list is missing");
    result.add(*t);
  }
  const Tensor& first = *tensors[0];
  for (const Tensor* t : tensors) {
    if (t->dim() != first.dim() ||
        !std::equal(t->sizes().begin(), t->sizes().end(), first.sizes().begin())) {
      return ctx.fail(fmt::format("stack expects each tensor to be equal size, but got {} and {}",
                                  shape_string(first.sizes()), shape_string(t->sizes())));
    }
  }
  if (!can_cast(result.get(), out->dtype())) {
    return ctx.fail(fmt::format("cannot write {} into an output of {}",
                                scalar_type_name(result.get()), scalar_type_name(out->dtype())));
  }
  if (first.dim() + 1 > kMaxRank) return ctx.fail("result rank above 16");
  ET_ASSIGN_OR_RETURN(int dim, wrap_dim(ctx, dim_arg, first.dim() + 1));
  Shape shape;
  shape.rank = first.dim() + 1;
  for (int d = 0, s = 0; d < shape.rank; ++d) {
    shape.sizes[d] = d == dim ? static_cast<int64_t>(tensors.size()) : first.size(s++);
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  // Each operand fills the slice out.select(dim, k).
  const Shape part = shape_of(first);
  std::array<int64_t, kMaxRank> dst_strides{};
  for (int d = 0, s = 0; d < shape.rank; ++d) {
    if (d != dim) dst_strides[s++] = out->stride(d);
  }
  const int64_t out_elsize = static_cast<int64_t>(out->element_size());
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = *tensors[k];
    auto* dst = static_cast<uint8_t*>(out->mutable_data()) +
                static_cast<int64_t>(k) * out->stride(dim) * out_elsize;
    if (t.dtype() == out->dtype()) {
      strided_copy(part, t.data(), t.strides().data(), dst, dst_strides.data(), t.element_size());
    } else if (!convert_strided(part, t.dtype(), t.data(), t.strides().data(), out->dtype(), dst,
                                dst_strides.data())) {
      return ctx.unsupported(fmt::format("dtype {} is not supported", scalar_type_name(t.dtype())));
    }
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::stack.out", stack_out);

}  // namespace
}  // namespace et::kernels
