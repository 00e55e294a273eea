// Bitwise ops with a Scalar operand, and the shift ops, on integers (and bool where
// PyTorch allows it). Each op's file registers its instantiations.
#pragma once

#include <cstdint>

#include "kernels/util/binary_op.h"
#include "kernels/util/scalar_narrow.h"

namespace et::kernels {

// aten::bitwise_{and,or,xor}.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
template <typename Op>
Status bitwise_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar other, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  const ScalarType common = ResultType().add(*self).add(other).get();
  if (is_floating(common)) return ctx.fail("bitwise ops need integer or bool operands");
  return binary_arith_scalar(ctx, *self, other, *out, [](auto x, auto y) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return x;  // refused above
    } else {
      return Op{}(x, y);
    }
  });
}

// PyTorch's shifts in a dtype of `bits` bits: a left shift by a negative amount or by
// the width or more gives 0; a right shift by such an amount keeps only the sign
// (0 or -1; unsigned types have no sign bit and give 0).
struct ShiftLeft {
  static int64_t apply(ScalarType t, int64_t a, int64_t b, int bits) {
    if (b < 0 || b >= bits) return 0;
    return narrow_to(t, static_cast<int64_t>(static_cast<uint64_t>(a) << b));
  }
};
struct ShiftRight {
  static int64_t apply(ScalarType t, int64_t a, int64_t b, int bits) {
    const int max_shift = t == ScalarType::kByte ? bits : bits - 1;
    if (b < 0 || b >= max_shift) return t == ScalarType::kByte ? 0 : (a < 0 ? -1 : 0);
    return a >> b;  // arithmetic shift of a value already in range of t
  }
};

template <typename Shift>
Status shift(const KernelContext& ctx, const Tensor& self, ScalarType common, Tensor& out,
             const Tensor* other, const Scalar* scalar) {
  if (!is_integral(common, /*include_bool=*/false)) {
    return ctx.fail(fmt::format("shifts need integer operands, not {}", scalar_type_name(common)));
  }
  ET_ASSIGN_OR_RETURN(ScalarType checked, common_dtype(ctx, common, out));
  const int bits = static_cast<int>(element_size(checked)) * 8;
  if (other != nullptr) {
    return map_elementwise<int64_t, int64_t, 2>(
        ctx, {&self, other}, out,
        [=](int64_t a, int64_t b) { return Shift::apply(checked, a, b, bits); });
  }
  // The scalar is first converted to the compute dtype, as PyTorch wraps it.
  const int64_t b = narrow_to(checked, scalar_as<int64_t>(*scalar));
  return map_elementwise<int64_t, int64_t, 1>(
      ctx, {&self}, out, [=](int64_t a) { return Shift::apply(checked, a, b, bits); });
}

// aten::bitwise_{left,right}_shift.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
template <typename Shift>
Status shift_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* other, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return shift<Shift>(ctx, *self, ResultType().add(*self).add(*other).get(), *out, other, nullptr);
}

// aten::bitwise_{left,right}_shift.Tensor_Scalar_out(Tensor self, Scalar other, *,
//     Tensor(a!) out)
template <typename Shift>
Status shift_scalar_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Scalar other, ctx.scalar_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  return shift<Shift>(ctx, *self, ResultType().add(*self).add(other).get(), *out, nullptr, &other);
}

}  // namespace et::kernels
