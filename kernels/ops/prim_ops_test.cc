// ExecuTorch's prim scalar ops (kernels/ops/op_prim_scalar.cc), each called by name in a
// one-instruction program run through Method, on constant operands. The fixtures
// zoo_p_* (tests/models/zoo_ops_prim.py) run the ops the exporter emits on symbolic
// values from real exports; these tests cover what no current export emits
// (floordiv.int and mod.int, the names older exporters used; sym_int.Scalar) and the
// operand kinds an export of sizes never produces (float and bool operands, the
// int64 edges, division by zero).
//
// Expected values are Python's: what the same expression gives in plain Python
// (`-7 // 2`, `round(2.5)`, `math.ceil(-2.1)`, `max(2.5, 1)` ...), worked out by hand
// from Python's rules (floor division and modulo toward negative infinity, round half
// to even, int op int stays int, a float operand makes a float). Where Python's int
// would leave int64 the result wraps, and a float too large for an int fails the call.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/testing/program_builder.h"

namespace et {
namespace {

using testing::ProgramBuilder;
using Operand = std::variant<int64_t, double, bool>;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// The result of one call: its kind and value.
struct Out {
  ValueKind kind = ValueKind::kNone;
  int64_t i = 0;
  double d = 0;
  bool b = false;
};

// Runs executorch_prim::<name>.<overload>(operands..., result) as the one instruction
// of a program and returns the result slot (the method's output).
Result<Out> call(const std::string& name, const std::string& overload,
                 const std::vector<Operand>& operands) {
  ProgramBuilder b;
  std::vector<int32_t> args;
  for (const Operand& v : operands) {
    if (const auto* i = std::get_if<int64_t>(&v)) {
      args.push_back(b.add_int(*i));
    } else if (const auto* d = std::get_if<double>(&v)) {
      args.push_back(b.add_double(*d));
    } else {
      args.push_back(b.add_bool(std::get<bool>(v)));
    }
  }
  const int result = b.add_none();
  args.push_back(result);
  b.kernel_call(b.add_operator("executorch_prim::" + name, overload), args);
  b.set_outputs({result});
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const Program> program,
                      Program::load(ProgramBytes::adopt(b.finish())));
  ET_ASSIGN_OR_RETURN(std::unique_ptr<Method> method, Method::load(program, "forward"));
  ET_RETURN_IF_ERROR(method->execute());
  ET_ASSIGN_OR_RETURN(const Value* v, method->output(0));
  return Out{v->kind(), v->is_int() ? v->to_int() : 0, v->is_double() ? v->to_double() : 0,
             v->is_bool() && v->to_bool()};
}

void expect_int(const std::string& op, const std::vector<Operand>& in, int64_t want,
                const std::string& overload = "Scalar") {
  auto r = call(op, overload, in);
  ASSERT_TRUE(r.ok()) << op << ": " << r.status().to_string();
  EXPECT_EQ(r->kind, ValueKind::kInt) << op;
  EXPECT_EQ(r->i, want) << op;
}

void expect_double(const std::string& op, const std::vector<Operand>& in, double want) {
  auto r = call(op, "Scalar", in);
  ASSERT_TRUE(r.ok()) << op << ": " << r.status().to_string();
  EXPECT_EQ(r->kind, ValueKind::kDouble) << op;
  EXPECT_EQ(r->d, want) << op;
}

void expect_bool(const std::string& op, const std::vector<Operand>& in, bool want) {
  auto r = call(op, "Scalar", in);
  ASSERT_TRUE(r.ok()) << op << ": " << r.status().to_string();
  EXPECT_EQ(r->kind, ValueKind::kBool) << op;
  EXPECT_EQ(r->b, want) << op;
}

void expect_failure(const std::string& op, const std::string& overload,
                    const std::vector<Operand>& in, const std::string& message) {
  auto r = call(op, overload, in);
  ASSERT_FALSE(r.ok()) << op;
  EXPECT_NE(r.status().message().find(message), std::string::npos) << r.status().to_string();
}

Operand I(int64_t v) { return v; }
Operand D(double v) { return v; }
Operand B(bool v) { return v; }

TEST(PrimOps, FloorDivRoundsTowardNegativeInfinity) {
  for (const std::string overload : {"Scalar", "int"}) {
    SCOPED_TRACE(overload);
    expect_int("floordiv", {I(7), I(2)}, 3, overload);
    expect_int("floordiv", {I(-7), I(2)}, -4, overload);  // C's division gives -3
    expect_int("floordiv", {I(7), I(-2)}, -4, overload);
    expect_int("floordiv", {I(-7), I(-2)}, 3, overload);
    expect_int("floordiv", {I(6), I(-3)}, -2, overload);
    expect_int("floordiv", {I(0), I(-5)}, 0, overload);
    expect_int("floordiv", {I(-1), I(kMax)}, -1, overload);
    // Python's answer, 2**63, does not fit: it wraps (no INT64_MIN / -1 trap).
    expect_int("floordiv", {I(kMin), I(-1)}, kMin, overload);
    expect_failure("floordiv", overload, {I(5), I(0)}, "integer division by zero");
  }
  expect_double("floordiv", {D(7.5), I(2)}, 3.0);  // a float operand: a float result
  expect_double("floordiv", {D(-7.5), D(2.0)}, -4.0);
  expect_double("floordiv", {I(7), D(-2.0)}, -4.0);
}

TEST(PrimOps, ModTakesTheDivisorsSign) {
  for (const std::string overload : {"Scalar", "int"}) {
    SCOPED_TRACE(overload);
    expect_int("mod", {I(7), I(3)}, 1, overload);
    expect_int("mod", {I(-7), I(3)}, 2, overload);  // C's % gives -1
    expect_int("mod", {I(7), I(-3)}, -2, overload);
    expect_int("mod", {I(-7), I(-3)}, -1, overload);
    expect_int("mod", {I(6), I(-3)}, 0, overload);
    expect_int("mod", {I(kMin), I(-1)}, 0, overload);
    expect_int("mod", {I(kMin), I(3)}, 1, overload);  // -2**63 % 3 == 1
    expect_failure("mod", overload, {I(5), I(0)}, "integer division by zero");
  }
  expect_double("mod", {D(-7.5), I(2)}, 0.5);
  expect_double("mod", {D(7.5), D(-2.0)}, -0.5);
}

TEST(PrimOps, TrueDivIsAlwaysFloat) {
  expect_double("truediv", {I(7), I(2)}, 3.5);
  expect_double("truediv", {I(-7), I(4)}, -1.75);
  expect_double("truediv", {I(6), I(3)}, 2.0);  // a float even when exact
  expect_double("truediv", {D(1.5), I(-2)}, -0.75);
  expect_double("truediv", {B(true), I(4)}, 0.25);
}

TEST(PrimOps, NegKeepsTheKind) {
  expect_int("neg", {I(7)}, -7);
  expect_int("neg", {I(-3)}, 3);
  expect_int("neg", {I(kMin)}, kMin);  // wraps
  expect_double("neg", {D(2.5)}, -2.5);
  expect_int("neg", {B(true)}, -1);  // -True == -1
}

TEST(PrimOps, SymFloatAndSymInt) {
  expect_double("sym_float", {I(7)}, 7.0);
  expect_double("sym_float", {I(-3)}, -3.0);
  expect_double("sym_float", {D(2.25)}, 2.25);
  expect_double("sym_float", {B(true)}, 1.0);
  expect_int("sym_int", {D(2.7)}, 2);  // int(2.7): toward zero
  expect_int("sym_int", {D(-2.7)}, -2);
  expect_int("sym_int", {I(-9)}, -9);
  expect_failure("sym_int", "Scalar", {D(1e300)}, "does not fit an int");
  expect_failure("sym_int", "Scalar", {D(std::numeric_limits<double>::quiet_NaN())},
                 "does not fit an int");
}

TEST(PrimOps, CeilRoundTruncGiveInts) {
  expect_int("ceil", {D(2.1)}, 3);
  expect_int("ceil", {D(-2.1)}, -2);
  expect_int("ceil", {D(-0.5)}, 0);
  expect_int("ceil", {I(5)}, 5);
  // round(): half to even.
  expect_int("round", {D(2.5)}, 2);
  expect_int("round", {D(3.5)}, 4);
  expect_int("round", {D(-2.5)}, -2);
  expect_int("round", {D(-3.5)}, -4);
  expect_int("round", {D(2.4)}, 2);
  expect_int("round", {D(-2.6)}, -3);
  expect_int("round", {I(-4)}, -4);
  expect_int("trunc", {D(2.7)}, 2);
  expect_int("trunc", {D(-2.7)}, -2);  // floor would give -3
  expect_int("trunc", {I(11)}, 11);
  for (const char* op : {"ceil", "round", "trunc"}) {
    expect_failure(op, "Scalar", {D(-1e19)}, "does not fit an int");
    expect_failure(op, "Scalar", {D(std::numeric_limits<double>::infinity())},
                   "does not fit an int");
  }
}

TEST(PrimOps, SymMaxAndSymMin) {
  expect_int("sym_max", {I(3), I(4)}, 4);
  expect_int("sym_max", {I(-2), I(-7)}, -2);
  expect_int("sym_max", {I(kMin), I(kMax)}, kMax);
  // torch.sym_max/sym_min (what the op stands for) make a float when either operand
  // is one; Python's builtin max would keep the int 1.
  expect_double("sym_max", {D(2.5), I(1)}, 2.5);
  expect_double("sym_max", {I(1), D(-2.5)}, 1.0);
  expect_int("sym_min", {I(3), I(4)}, 3);
  expect_int("sym_min", {I(-2), I(-7)}, -7);
  expect_int("sym_min", {I(kMin), I(kMax)}, kMin);
  expect_double("sym_min", {D(2.5), I(1)}, 1.0);
  expect_double("sym_min", {I(1), D(-2.5)}, -2.5);
}

TEST(PrimOps, Comparisons) {
  struct Case {
    Operand a, b;
    bool gt, lt, ge, le;
  };
  const std::vector<Case> cases = {
      {I(3), I(4), false, true, false, true},
      {I(4), I(4), false, false, true, true},
      {I(5), I(4), true, false, true, false},
      {I(-5), I(4), false, true, false, true},
      {I(4), D(4.5), false, true, false, true},
      {D(4.0), I(4), false, false, true, true},
      {D(-0.5), D(-1.5), true, false, true, false},
      // int64 values a double cannot tell apart are compared as ints.
      {I(kMax), I(kMax - 1), true, false, true, false},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    SCOPED_TRACE(k);
    const Case& c = cases[k];
    expect_bool("gt", {c.a, c.b}, c.gt);
    expect_bool("lt", {c.a, c.b}, c.lt);
    expect_bool("ge", {c.a, c.b}, c.ge);
    expect_bool("le", {c.a, c.b}, c.le);
  }
}

TEST(PrimOps, SymNotAndSymIte) {
  expect_bool("sym_not", {B(true)}, false);
  expect_bool("sym_not", {B(false)}, true);
  expect_int("sym_ite", {B(true), I(1), I(2)}, 1);
  expect_int("sym_ite", {B(false), I(1), I(2)}, 2);
  expect_double("sym_ite", {B(true), D(2.5), D(1.5)}, 2.5);
  expect_double("sym_ite", {B(false), I(7), D(-1.5)}, -1.5);  // the chosen one's kind
  expect_int("sym_ite", {B(true), I(7), D(-1.5)}, 7);
  expect_bool("sym_ite", {B(false), B(true), B(false)}, false);
  // The condition must be a bool: an int is refused, not read as one.
  expect_failure("sym_ite", "Scalar", {I(1), I(1), I(2)}, "argument 0");
  expect_failure("sym_not", "Scalar", {D(0.0)}, "argument 0");
}

}  // namespace
}  // namespace et
