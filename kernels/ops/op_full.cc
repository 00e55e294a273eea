// aten::full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out)
#include "kernels/util/copy_util.h"
#include "kernels/util/fill.h"

namespace et::kernels {
namespace {

Status full_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(auto sizes, ctx.int_list_arg(0));
  ET_ASSIGN_OR_RETURN(Scalar value, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  Shape shape;
  if (sizes.size() > kMaxRank) return ctx.fail("rank above 16");
  shape.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < shape.rank; ++d) shape.sizes[d] = sizes[d];
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  return fill_with(ctx, *out, value);
}

ET_REGISTER_KERNEL("aten::full.out", full_out);

}  // namespace
}  // namespace et::kernels
