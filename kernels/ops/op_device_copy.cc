// et_copy::_h2d_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// et_copy::_d2h_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// ExecuTorch's host-to-device and device-to-host transfers at a delegate boundary. This
// runtime keeps every tensor in CPU memory, so both are a plain copy: out takes self's
// shape and values.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status device_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (self->dtype() != out->dtype()) {
    return ctx.fail(fmt::format("copying {} into {}", scalar_type_name(self->dtype()),
                                scalar_type_name(out->dtype())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
  return copy_logical(ctx, *self, *out);
}

ET_REGISTER_KERNEL("et_copy::_h2d_copy.out", device_copy_out);
ET_REGISTER_KERNEL("et_copy::_d2h_copy.out", device_copy_out);

}  // namespace
}  // namespace et::kernels
