// Each check of the program verifier, on a synthetic program that breaks exactly it.
#include <gtest/gtest.h>

#include <string>

#include "runtime/core/program.h"
#include "runtime/testing/program_builder.h"

namespace et {
namespace {

using testing::ProgramBuilder;

// A valid program: out = op(in) with in and out planned in buffer 1.
ProgramBuilder valid() {
  ProgramBuilder b;
  const int in = b.add_tensor({.sizes = {2, 3}, .memory_id = 1, .memory_offset = 0});
  const int out = b.add_tensor({.sizes = {2, 3}, .memory_id = 1, .memory_offset = 32});
  const int op = b.add_operator("test::op", "out");
  b.kernel_call(op, {in, out, out});
  b.set_inputs({in});
  b.set_outputs({out});
  b.set_planned_buffers({64});
  return b;
}

Status load(const ProgramBuilder& b) {
  return Program::load(ProgramBytes::adopt(b.finish())).status();
}

void expect_refused(const ProgramBuilder& b, const std::string& part,
                    StatusCode code = StatusCode::kInvalidProgram) {
  Status s = load(b);
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
}

TEST(ProgramVerifier, ValidSyntheticProgramLoads) {
  EXPECT_TRUE(load(valid()).ok()) << load(valid()).to_string();
}

TEST(ProgramVerifier, InputIndexOutOfRange) {
  ProgramBuilder b = valid();
  b.set_inputs({7});
  expect_refused(b, "inputs refers to value 7");
}

TEST(ProgramVerifier, OutputIndexNegative) {
  ProgramBuilder b = valid();
  b.set_outputs({-1});
  expect_refused(b, "outputs refers to value -1");
}

TEST(ProgramVerifier, OperatorIndexOutOfRange) {
  ProgramBuilder b = valid();
  b.kernel_call(5, {0});
  expect_refused(b, "operator 5 does not exist");
}

TEST(ProgramVerifier, KernelArgumentOutOfRange) {
  ProgramBuilder b = valid();
  b.kernel_call(0, {0, 99});
  expect_refused(b, "kernel argument refers to value 99");
}

TEST(ProgramVerifier, JumpPastTheChain) {
  ProgramBuilder b = valid();
  const int cond = b.add_bool(false);
  b.jump_false(cond, 10);
  expect_refused(b, "jump to instruction 10");
}

TEST(ProgramVerifier, JumpConditionOfTheWrongKind) {
  ProgramBuilder b = valid();
  const int cond = b.add_int(1);
  b.jump_false(cond, 0);
  expect_refused(b, "jump condition is neither a bool nor a tensor");
}

TEST(ProgramVerifier, MoveOutOfRange) {
  ProgramBuilder b = valid();
  b.move(0, 42);
  expect_refused(b, "move destination refers to value 42");
}

TEST(ProgramVerifier, PlannedBufferThatDoesNotExist) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {2}, .memory_id = 3});
  expect_refused(b, "planned in buffer 3");
}

TEST(ProgramVerifier, PlannedTensorOutsideItsBuffer) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {2, 3}, .memory_id = 1, .memory_offset = 48});  // 24 bytes at 48 > 64
  expect_refused(b, "do not fit planned buffer 1");
}

TEST(ProgramVerifier, PlannedOffsetOverflowIsCaught) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {2}, .memory_id = 1, .memory_offset = ~uint64_t{0} - 3});
  EXPECT_EQ(load(b).code(), StatusCode::kInvalidProgram);
}

TEST(ProgramVerifier, MisalignedPlannedTensor) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {2}, .memory_id = 1, .memory_offset = 2});
  expect_refused(b, "not aligned to its 4-byte elements");
}

TEST(ProgramVerifier, RankAboveSixteen) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = std::vector<int32_t>(17, 1)});
  expect_refused(b, "rank 17");
}

TEST(ProgramVerifier, DimOrderThatIsNotAPermutation) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {2, 3}, .dim_order = {1, 1}});
  expect_refused(b, "not a permutation");
}

TEST(ProgramVerifier, NegativeSize) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {2, -3}});
  expect_refused(b, "negative");
}

TEST(ProgramVerifier, ByteCountOverflow) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {1 << 30, 1 << 30, 1 << 30}});
  expect_refused(b, "overflows");
}

TEST(ProgramVerifier, StrideOverflowBehindAnEmptyDim) {
  // No bytes, but the strides of the other dims still multiply up past int64.
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {0, 1 << 30, 1 << 30, 1 << 30}});
  expect_refused(b, "overflows");
}

TEST(ProgramVerifier, UnknownScalarType) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {2}, .scalar_type_override = 42});
  expect_refused(b, "unknown scalar type code 42");
}

TEST(ProgramVerifier, UnboundedDynamicShapeIsNotSupported) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {2}, .shape_dynamism = 2});
  expect_refused(b, "shape dynamism 2", StatusCode::kNotSupported);
}

TEST(ProgramVerifier, ConstantThatDoesNotExist) {
  ProgramBuilder b = valid();
  b.add_tensor({.sizes = {2}, .data_buffer_idx = 4});
  expect_refused(b, "constant buffer 4 does not exist");
}

TEST(ProgramVerifier, ConstantShorterThanItsTensor) {
  ProgramBuilder b = valid();
  b.add_constant(std::vector<uint8_t>(4));
  b.add_tensor({.sizes = {2}, .data_buffer_idx = 1});
  expect_refused(b, "has 4 bytes; the tensor needs 8");
}

TEST(ProgramVerifier, IntListItemThatIsNotAnInt) {
  ProgramBuilder b = valid();
  b.add_int_list({0});  // value 0 is a tensor
  expect_refused(b, "not an int");
}

TEST(ProgramVerifier, TensorListItemThatIsNotATensor) {
  ProgramBuilder b = valid();
  const int i = b.add_int(3);
  b.add_tensor_list({i});
  expect_refused(b, "not a Tensor");
}

}  // namespace
}  // namespace et
