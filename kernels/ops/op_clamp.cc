// aten::clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out)
// aten::clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out)
#include "kernels/util/binary_op.h"
#include "kernels/util/float_math.h"

namespace et::kernels {
namespace {

Status clamp_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto lo, ctx.optional_scalar_arg(1));
  ET_ASSIGN_OR_RETURN(auto hi, ctx.optional_scalar_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (!lo && !hi) return ctx.fail("at least one of min and max must be given");
  ResultType result;
  result.add(*self);
  if (lo) result.add(*lo);
  if (hi) result.add(*hi);
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, result.get(), *out));
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    auto value = [](const std::optional<Scalar>& s) { return s ? scalar_as<C>(*s) : C(0); };
    const C l = value(lo), h = value(hi);
    return map_elementwise<C, C, 1>(ctx, {self}, *out, [&](C x) {
      return clamp_value(x, l, h, lo.has_value(), hi.has_value());
    });
  });
}

Status clamp_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* lo, ctx.optional_input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* hi, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (!lo && !hi) return ctx.fail("at least one of min and max must be given");
  ResultType result;
  result.add(*self);
  if (lo) result.add(*lo);
  if (hi) result.add(*hi);
  ET_ASSIGN_OR_RETURN(ScalarType common, common_dtype(ctx, result.get(), *out));
  return dispatch_compute(ctx, common, [&](auto zero) -> Status {
    using C = decltype(zero);
    if (lo && hi) {
      return map_elementwise<C, C, 3>(ctx, {self, lo, hi}, *out, [](C x, C l, C h) {
        return clamp_value(x, l, h, true, true);
      });
    }
    const Tensor* bound = lo ? lo : hi;
    const bool is_lo = lo != nullptr;
    return map_elementwise<C, C, 2>(ctx, {self, bound}, *out,
                                    [&](C x, C b) { return clamp_value(x, b, b, is_lo, !is_lo); });
  });
}

ET_REGISTER_KERNEL("aten::clamp.out", clamp_out);
ET_REGISTER_KERNEL("aten::clamp.Tensor_out", clamp_tensor_out);

}  // namespace
}  // namespace et::kernels
