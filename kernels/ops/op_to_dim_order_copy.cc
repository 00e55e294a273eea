// dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,
//     int[]? dim_order=None, Tensor(a!) out)
// The exporter's form of Tensor.to(dtype) and .to(memory_format): out takes self's
// values converted to out's dtype, laid out in out's dim order.
#include <fmt/format.h>

#include "kernels/util/convert.h"

namespace et::kernels {
namespace {

Status to_dim_order_copy_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dim_order, ctx.optional_int_list_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (dim_order) {
    const auto want = out->dim_order();
    if (dim_order->size() != want.size() ||
        !std::equal(dim_order->begin(), dim_order->end(), want.begin())) {
      return ctx.fail(fmt::format("dim_order argument does not match the output's dim order {}",
                                  dim_order_string(want)));
    }
  }
  return copy_convert(ctx, *self, *out);
}

ET_REGISTER_KERNEL("dim_order_ops::_to_dim_order_copy.out", to_dim_order_copy_out);

}  // namespace
}  // namespace et::kernels
