// executorch_prim::<op>.Scalar(Scalar a, Scalar b) -> Scalar, and the other prim
// scalar ops the exporter emits for symbolic sizes: arithmetic, comparisons, and
// conversions on Int/Double/Bool values. The result goes into the value after the
// arguments. They share one table here rather than one file each: every entry is a
// line, and the semantics (Python's, on the operands' kinds) are common to them all.
#include <fmt/format.h>

#include <cmath>

#include "runtime/core/kernel.h"

namespace et::kernels {
namespace {

// Python semantics: int op int stays int (floor division and modulo round toward
// negative infinity); any float operand makes the result a float.
struct Number {
  bool is_float = false;
  int64_t i = 0;
  double d = 0;
  double as_double() const { return is_float ? d : static_cast<double>(i); }
};

Result<Number> number(const KernelContext& ctx, size_t k) {
  ET_ASSIGN_OR_RETURN(Scalar s, ctx.scalar_arg(k));
  Number n;
  n.is_float = s.is_floating();
  n.i = s.to_int();
  n.d = s.d;
  return n;
}

Status set_number(KernelContext& ctx, size_t k, const Number& n) {
  ET_ASSIGN_OR_RETURN(Value * out, ctx.scalar_output(k));
  if (n.is_float) {
    out->set_double(n.d);
  } else {
    out->set_int(n.i);
  }
  return Status();
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));  // no INT64_MIN / -1 trap
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

template <typename IntOp, typename FloatOp>
Status arithmetic(KernelContext& ctx, IntOp int_op, FloatOp float_op, bool int_divides = false) {
  ET_ASSIGN_OR_RETURN(Number a, number(ctx, 0));
  ET_ASSIGN_OR_RETURN(Number b, number(ctx, 1));
  Number r;
  if (!a.is_float && !b.is_float) {
    if (int_divides && b.i == 0) return ctx.fail("integer division by zero");
    r.i = int_op(a.i, b.i);
  } else {
    r.is_float = true;
    r.d = float_op(a.as_double(), b.as_double());
  }
  return set_number(ctx, 2, r);
}

template <typename Cmp>
Status compare(KernelContext& ctx, Cmp cmp) {
  ET_ASSIGN_OR_RETURN(Number a, number(ctx, 0));
  ET_ASSIGN_OR_RETURN(Number b, number(ctx, 1));
  ET_ASSIGN_OR_RETURN(Value * out, ctx.scalar_output(2));
  out->set_bool((!a.is_float && !b.is_float) ? cmp(a.i, b.i) : cmp(a.as_double(), b.as_double()));
  return Status();
}

using U = uint64_t;  // wrapping arithmetic, never signed overflow

Status add(KernelContext& c) {
  return arithmetic(
      c, [](int64_t a, int64_t b) { return static_cast<int64_t>(U(a) + U(b)); },
      [](double a, double b) { return a + b; });
}
Status sub(KernelContext& c) {
  return arithmetic(
      c, [](int64_t a, int64_t b) { return static_cast<int64_t>(U(a) - U(b)); },
      [](double a, double b) { return a - b; });
}
Status mul(KernelContext& c) {
  return arithmetic(
      c, [](int64_t a, int64_t b) { return static_cast<int64_t>(U(a) * U(b)); },
      [](double a, double b) { return a * b; });
}
Status floordiv(KernelContext& c) {
  return arithmetic(
      c, floor_div, [](double a, double b) { return std::floor(a / b); }, true);
}
Status mod(KernelContext& c) {
  return arithmetic(
      c, floor_mod, [](double a, double b) { return a - std::floor(a / b) * b; }, true);
}
Status sym_max(KernelContext& c) {
  return arithmetic(
      c, [](int64_t a, int64_t b) { return std::max(a, b); },
      [](double a, double b) { return std::max(a, b); });
}
Status sym_min(KernelContext& c) {
  return arithmetic(
      c, [](int64_t a, int64_t b) { return std::min(a, b); },
      [](double a, double b) { return std::min(a, b); });
}
Status truediv(KernelContext& c) {
  ET_ASSIGN_OR_RETURN(Number a, number(c, 0));
  ET_ASSIGN_OR_RETURN(Number b, number(c, 1));
  return set_number(c, 2, Number{true, 0, a.as_double() / b.as_double()});
}
Status eq(KernelContext& c) {
  return compare(c, [](auto a, auto b) { return a == b; });
}
Status gt(KernelContext& c) {
  return compare(c, [](auto a, auto b) { return a > b; });
}
Status lt(KernelContext& c) {
  return compare(c, [](auto a, auto b) { return a < b; });
}
Status ge(KernelContext& c) {
  return compare(c, [](auto a, auto b) { return a >= b; });
}
Status le(KernelContext& c) {
  return compare(c, [](auto a, auto b) { return a <= b; });
}

// Unary: the result goes into argument 1.
template <typename F>
Status unary(KernelContext& c, F f) {
  ET_ASSIGN_OR_RETURN(Number a, number(c, 0));
  return set_number(c, 1, f(a));
}

Status neg(KernelContext& c) {
  return unary(c, [](Number a) {
    return a.is_float ? Number{true, 0, -a.d} : Number{false, static_cast<int64_t>(0 - U(a.i)), 0};
  });
}
Status sym_float(KernelContext& c) {
  return unary(c, [](Number a) { return Number{true, 0, a.as_double()}; });
}
Status to_int(KernelContext& c, double (*round)(double)) {
  ET_ASSIGN_OR_RETURN(Number a, number(c, 0));
  ET_ASSIGN_OR_RETURN(Value * out, c.scalar_output(1));
  const double v = a.is_float ? round(a.d) : static_cast<double>(a.i);
  if (!(v >= -9.2e18 && v <= 9.2e18)) return c.fail(fmt::format("{} does not fit an int", v));
  out->set_int(a.is_float ? static_cast<int64_t>(v) : a.i);
  return Status();
}
Status sym_int(KernelContext& c) { return to_int(c, std::trunc); }
Status ceil(KernelContext& c) { return to_int(c, std::ceil); }
Status round(KernelContext& c) { return to_int(c, std::nearbyint); }
Status trunc(KernelContext& c) { return to_int(c, std::trunc); }
Status sym_not(KernelContext& c) {
  ET_ASSIGN_OR_RETURN(bool b, c.bool_arg(0));
  ET_ASSIGN_OR_RETURN(Value * out, c.scalar_output(1));
  out->set_bool(!b);
  return Status();
}
// (cond, a, b) -> a if cond else b. Copies the chosen number, never a whole value: a
// tensor or list copied over another value would outlive the execute that made it.
Status sym_ite(KernelContext& c) {
  ET_ASSIGN_OR_RETURN(bool cond, c.bool_arg(0));
  ET_ASSIGN_OR_RETURN(Scalar chosen, c.scalar_arg(cond ? 1 : 2));
  ET_ASSIGN_OR_RETURN(Value * out, c.scalar_output(3));
  switch (chosen.kind) {
    case ValueKind::kDouble:
      out->set_double(chosen.d);
      break;
    case ValueKind::kBool:
      out->set_bool(chosen.b);
      break;
    default:
      out->set_int(chosen.i);
  }
  return Status();
}

ET_REGISTER_KERNEL("executorch_prim::add.Scalar", add);
ET_REGISTER_KERNEL("executorch_prim::sub.Scalar", sub);
ET_REGISTER_KERNEL("executorch_prim::mul.Scalar", mul);
ET_REGISTER_KERNEL("executorch_prim::floordiv.Scalar", floordiv);
ET_REGISTER_KERNEL("executorch_prim::floordiv.int", floordiv);
ET_REGISTER_KERNEL("executorch_prim::truediv.Scalar", truediv);
ET_REGISTER_KERNEL("executorch_prim::mod.Scalar", mod);
ET_REGISTER_KERNEL("executorch_prim::mod.int", mod);
ET_REGISTER_KERNEL("executorch_prim::eq.Scalar", eq);
ET_REGISTER_KERNEL("executorch_prim::gt.Scalar", gt);
ET_REGISTER_KERNEL("executorch_prim::lt.Scalar", lt);
ET_REGISTER_KERNEL("executorch_prim::ge.Scalar", ge);
ET_REGISTER_KERNEL("executorch_prim::le.Scalar", le);
ET_REGISTER_KERNEL("executorch_prim::neg.Scalar", neg);
ET_REGISTER_KERNEL("executorch_prim::sym_float.Scalar", sym_float);
ET_REGISTER_KERNEL("executorch_prim::sym_int.Scalar", sym_int);
ET_REGISTER_KERNEL("executorch_prim::ceil.Scalar", ceil);
ET_REGISTER_KERNEL("executorch_prim::round.Scalar", round);
ET_REGISTER_KERNEL("executorch_prim::trunc.Scalar", trunc);
ET_REGISTER_KERNEL("executorch_prim::sym_max.Scalar", sym_max);
ET_REGISTER_KERNEL("executorch_prim::sym_min.Scalar", sym_min);
ET_REGISTER_KERNEL("executorch_prim::sym_not.Scalar", sym_not);
ET_REGISTER_KERNEL("executorch_prim::sym_ite.Scalar", sym_ite);

}  // namespace
}  // namespace et::kernels
