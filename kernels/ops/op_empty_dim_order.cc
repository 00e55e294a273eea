// dim_order_ops::_empty_dim_order.out(int[] size, *, int[]? dim_order=None, Tensor(a!) out)
// The exporter's form of torch.empty: out takes `size` in its own dim order, which
// must be the one asked for. The values are unspecified: zero_fill writes zeroes.
#include <algorithm>

#include "kernels/util/scalar_creation.h"

namespace et::kernels {
namespace {

Status empty_dim_order_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(auto sizes, ctx.int_list_arg(0));
  ET_ASSIGN_OR_RETURN(auto dim_order, ctx.optional_int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (dim_order) {
    const auto want = out->dim_order();
    if (dim_order->size() != want.size() ||
        !std::equal(dim_order->begin(), dim_order->end(), want.begin())) {
      return ctx.fail(fmt::format("dim_order argument does not match the output's dim order {}",
                                  dim_order_string(want)));
    }
  }
  ET_RETURN_IF_ERROR(resize_to_sizes(ctx, *out, sizes));
  return zero_fill(*out);
}

ET_REGISTER_KERNEL("dim_order_ops::_empty_dim_order.out", empty_dim_order_out);

}  // namespace
}  // namespace et::kernels
