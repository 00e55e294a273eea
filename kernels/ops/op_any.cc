// aten::any.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out)
// aten::any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out)
// aten::any.all_out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/reduce.h"

namespace et::kernels {
namespace {

Status any(KernelContext& ctx, const Tensor& self, std::optional<std::span<const int64_t>> dims,
           bool keepdim, Tensor& out) {
  ET_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduction(ctx, self, dims, keepdim));
  return reduce_each<bool, bool>(ctx, self, plan, out, [](const bool* base, const ReducePlan& p) {
    bool acc = false;
    if (base) for_each_reduced(p, base, [&](bool v) { acc = acc || v; });
    return acc;
  });
}

Status any_dims_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.optional_int_list_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  return any(ctx, *self, dims, keepdim, *out);
}

Status any_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t dim, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(bool keepdim, ctx.bool_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  return any(ctx, *self, std::span<const int64_t>(&dim, 1), keepdim, *out);
}

Status any_all_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  return any(ctx, *self, std::nullopt, false, *out);
}

ET_REGISTER_KERNEL("aten::any.dims_out", any_dims_out);
ET_REGISTER_KERNEL("aten::any.out", any_out);
ET_REGISTER_KERNEL("aten::any.all_out", any_all_out);

}  // namespace
}  // namespace et::kernels
