// The instruction executor on synthetic programs: kernel calls, moves, conditional
// jumps (a loop), frees, and the step budget.
#include <gtest/gtest.h>

#include <new>

#include "runtime/core/method.h"
#include "runtime/testing/program_builder.h"

namespace et {
namespace {

using testing::ProgramBuilder;

// test::dec(Int counter, Bool positive): counter -= 1; positive = counter > 0.
Status dec(KernelContext& ctx) {
  ctx.arg(0).set_int(ctx.arg(0).to_int() - 1);
  ctx.arg(1).set_bool(ctx.arg(0).to_int() > 0);
  return Status();
}

// test::inc_tensor(Tensor t): t[0] += 1 (float).
Status inc_tensor(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(Tensor * t, ctx.output(0));
  t->data_as<float>()[0] += 1;
  return Status();
}

std::unique_ptr<Method> load(const ProgramBuilder& b, const KernelRegistry& kernels) {
  auto program = Program::load(ProgramBytes::adopt(b.finish()));
  EXPECT_TRUE(program.ok()) << program.status().to_string();
  if (!program.ok()) return nullptr;
  auto m = Method::load(*program, "forward", {.kernels = &kernels});
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(Executor, JumpFalseMakesALoop) {
  // acc is a planned float tensor; the loop adds 1 to it `counter` times:
  //   0: inc_tensor(acc)   1: dec(counter, positive)   2: jump_false(positive, 4)
  //   3: jump_false(never, 0)                          4: (end)
  ProgramBuilder b;
  const int acc = b.add_tensor({.sizes = {1}, .memory_id = 1});
  const int counter = b.add_int(5);
  const int positive = b.add_bool(true);
  const int never = b.add_bool(false);
  const int inc = b.add_operator("test::inc_tensor");
  const int dec_op = b.add_operator("test::dec");
  b.kernel_call(inc, {acc});
  b.kernel_call(dec_op, {counter, positive});
  b.jump_false(positive, 4);
  b.jump_false(never, 0);
  b.kernel_call(inc, {acc});  // 4: one more after the loop
  b.set_outputs({acc});
  b.set_planned_buffers({16});
  KernelRegistry k;
  ASSERT_TRUE(k.add("test::inc_tensor", inc_tensor).ok());
  ASSERT_TRUE(k.add("test::dec", dec).ok());
  auto m = load(b, k);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(m->execute().ok());
  EXPECT_EQ((*m->output(0))->to_tensor().data_as<float>()[0], 6.0f);
}

TEST(Executor, MoveAliasesTheValue) {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {1}, .memory_id = 1});
  const int y = b.add_none();
  const int inc = b.add_operator("test::inc_tensor");
  b.move(x, y);
  b.kernel_call(inc, {y});  // writes x's memory through y
  b.set_outputs({x});
  b.set_planned_buffers({16});
  KernelRegistry k;
  ASSERT_TRUE(k.add("test::inc_tensor", inc_tensor).ok());
  auto m = load(b, k);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(m->execute().ok());
  EXPECT_EQ((*m->output(0))->to_tensor().data_as<float>()[0], 1.0f);
}

TEST(Executor, FreedTensorCannotBeUsed) {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {1}, .memory_id = 1});
  const int inc = b.add_operator("test::inc_tensor");
  b.free_value(x);
  b.kernel_call(inc, {x});
  b.set_planned_buffers({16});
  KernelRegistry k;
  ASSERT_TRUE(k.add("test::inc_tensor", inc_tensor).ok());
  auto m = load(b, k);
  ASSERT_NE(m, nullptr);
  Status s = m->execute();
  EXPECT_NE(s.message().find("has no memory"), std::string::npos) << s.message();
}

// A method that never ends by itself: one jump back to itself.
std::unique_ptr<Method> endless() {
  KernelRegistry k;
  return load(testing::endless_program(), k);
}

TEST(Executor, EndlessLoopIsStopped) {
  auto m = endless();
  ASSERT_NE(m, nullptr);
  Status s = m->execute();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("without finishing"), std::string::npos) << s.message();
}

TEST(Executor, AnEndlessLoopStopsOnceItsCallerIsGone) {
  auto m = endless();
  ASSERT_NE(m, nullptr);
  // Gone from the 1000th question on: the loop runs, then stops at the next check.
  int asked = 0;
  ExecuteLimits limits;
  limits.caller_gone = [](const void* arg) {
    return ++*static_cast<int*>(const_cast<void*>(arg)) >= 1000;
  };
  limits.caller_gone_arg = &asked;
  Status s = m->execute(limits);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
  EXPECT_NE(s.message().find("its caller went away"), std::string::npos) << s.message();
  EXPECT_EQ(asked, 1000);
}

TEST(Executor, KernelGivenTheWrongKindOfArgumentFailsCleanly) {
  ProgramBuilder b;
  const int i = b.add_int(1);
  const int inc = b.add_operator("test::inc_tensor");
  b.kernel_call(inc, {i});
  KernelRegistry k;
  ASSERT_TRUE(k.add("test::inc_tensor", inc_tensor).ok());
  auto m = load(b, k);
  ASSERT_NE(m, nullptr);
  Status s = m->execute();
  EXPECT_EQ(s.message(),
            "method 'forward', instruction 0:0: test::inc_tensor: argument 0 is int where an "
            "output tensor is required");
}

// test::throws(): what a library under a kernel may do for a size a program chose.
Status throws(KernelContext&) { throw std::bad_alloc(); }

// test::big_scratch(): scratch whose size overflows 64 bits.
Status big_scratch(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(void* p, ctx.temp_product({int64_t{1} << 40, int64_t{1} << 40}, 4));
  (void)p;
  return Status();
}

// Executes a program of one call to `fn`, registered as `op`.
Status execute_one(const char* op, KernelFn fn) {
  ProgramBuilder b;
  b.kernel_call(b.add_operator(op), {});
  KernelRegistry k;
  EXPECT_TRUE(k.add(op, fn).ok());
  auto m = load(b, k);
  return m ? m->execute() : internal_error("not loaded");
}

TEST(Executor, AnExceptionUnderAKernelBecomesItsError) {
  Status s = execute_one("test::throws", throws);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
  EXPECT_NE(s.message().find("out of memory"), std::string::npos) << s.message();
}

TEST(Executor, ScratchSizesAreOverflowChecked) {
  Status s = execute_one("test::big_scratch", big_scratch);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
  EXPECT_NE(s.message().find("overflows 64 bits"), std::string::npos) << s.message();
}

TEST(Executor, FreedPlannedTensorHasItsMemoryBackNextExecute) {
  // free(x) then inc(x) fails; the next execute finds x's planned memory again (the
  // free is undone), so the free of one call never leaks into the next.
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {1}, .memory_id = 1});
  const int y = b.add_tensor({.sizes = {1}, .memory_id = 1, .memory_offset = 4});
  const int inc = b.add_operator("test::inc_tensor");
  b.kernel_call(inc, {x});
  b.free_value(x);
  b.set_outputs({y});
  b.set_planned_buffers({16});
  KernelRegistry k;
  ASSERT_TRUE(k.add("test::inc_tensor", inc_tensor).ok());
  auto m = load(b, k);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(m->execute().ok());
  ASSERT_TRUE(m->execute().ok());  // inc(x) again: x has memory
}

}  // namespace
}  // namespace et
