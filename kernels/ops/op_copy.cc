// aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
// aten::copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out)
// Both give a tensor of self's shape holding src broadcast to it. copy_ writes self
// (the exporter uses it for mutable buffers and inputs written in place).
#include <fmt/format.h>

#include <cstring>

#include "kernels/util/shape_util.h"

namespace et::kernels {
namespace {

Status copy_broadcast(const KernelContext& ctx, const Tensor& shape_of, const Tensor& src,
                      Tensor& out) {
  if (src.dtype() != out.dtype()) {
    return ctx.unsupported(fmt::format("copying {} into {}", scalar_type_name(src.dtype()),
                                       scalar_type_name(out.dtype())));
  }
  Shape shape;
  shape.rank = shape_of.dim();
  for (int d = 0; d < shape.rank; ++d) shape.sizes[d] = shape_of.size(d);
  ET_ASSIGN_OR_RETURN(Shape joint, broadcast_shapes(ctx, shape_of, src));
  if (joint.rank != shape.rank ||
      !std::equal(joint.sizes.begin(), joint.sizes.begin() + joint.rank, shape.sizes.begin())) {
    return ctx.fail(fmt::format("source of shape {} does not broadcast to {}",
                                shape_string(src.sizes()), shape_string(shape_of.sizes())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, out, shape));
  const size_t elsize = out.element_size();
  const auto* in = static_cast<const uint8_t*>(src.data());
  auto* o = static_cast<uint8_t*>(out.mutable_data());
  if (src.numel() == out.numel() &&
      std::equal(src.dim_order().begin(), src.dim_order().end(), out.dim_order().begin()) &&
      src.dim() == out.dim()) {
    if (in != o) std::memmove(o, in, out.nbytes());
    return Status();
  }
  const auto src_strides = broadcast_strides(src, shape.rank);
  const std::array<const int64_t*, 2> strides = {src_strides.data(), out.strides().data()};
  for_each_index<2>(shape, strides, [&](const std::array<int64_t, 2>& i) {
    std::memmove(o + i[1] * elsize, in + i[0] * elsize, elsize);
  });
  return Status();
}

Status copy_inplace(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(Tensor * self, ctx.output(0));
  ET_ASSIGN_OR_RETURN(const Tensor* src, ctx.input(1));
  return copy_broadcast(ctx, *self, *src, *self);
}

Status copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* src, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  return copy_broadcast(ctx, *self, *src, *out);
}

ET_REGISTER_KERNEL("aten::copy_", copy_inplace);
ET_REGISTER_KERNEL("aten::copy.out", copy_out);

}  // namespace
}  // namespace et::kernels
