// Bundled programs: loading a .bpte as its program, and verifying its test cases, on
// the exported fixture and on bundles built here around the mlp fixture.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "runtime/devtools/bundled_verify.h"
#include "runtime/testing/bundle_builder.h"
#include "runtime/testing/fixtures.h"

namespace et {
namespace {

using testing::BundleCase;
using testing::BundleSuite;
using testing::BundleValue;

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<float> input_values(float shift) {
  std::vector<float> v(4 * 16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) + shift);
  return v;
}

// What the runtime computes for mlp.pte on input_values(shift): the expectation the
// built bundles start from.
std::vector<float> mlp_output(float shift) {
  auto program = testing::fixture("mlp.pte");
  auto method = Method::load(program, "forward");
  EXPECT_TRUE(method.ok());
  std::vector<float> in = input_values(shift);
  const std::vector<int64_t> sizes{4, 16};
  TensorView view{.data = in.data(), .nbytes = in.size() * 4, .sizes = sizes};
  EXPECT_TRUE((*method)->set_input(0, InputValue::of_tensor(view)).ok());
  EXPECT_TRUE((*method)->execute().ok());
  const Tensor& out = (**(*method)->output(0)).to_tensor();
  return {out.data_as<float>(), out.data_as<float>() + out.numel()};
}

BundleCase mlp_case(float shift, float error = 0) {
  std::vector<float> want = mlp_output(shift);
  for (float& x : want) x += error;
  return {{BundleValue::floats({4, 16}, input_values(shift))}, {BundleValue::floats({4, 8}, want)}};
}

std::shared_ptr<const Program> load_bundle(const std::vector<uint8_t>& bytes) {
  auto program = Program::load(ProgramBytes::copy_of(bytes));
  EXPECT_TRUE(program.ok()) << program.status().to_string();
  return program.ok() ? *program : nullptr;
}

Status load_error(const std::vector<uint8_t>& bytes) {
  return Program::load(ProgramBytes::copy_of(bytes)).status();
}

std::vector<uint8_t> mlp_bytes() { return read_file(testing::fixture_path("mlp.pte")); }

TEST(BundledProgram, FixtureLoadsAsItsProgramWithItsCases) {
  auto program = testing::fixture("mlp_bundled.bpte");
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->method_names(), std::vector<std::string>{"forward"});
  ASSERT_NE(program->bundled_tests(), nullptr);
  ASSERT_EQ(program->bundled_tests()->suites.size(), 1u);
  EXPECT_EQ(program->bundled_tests()->suites[0].method, "forward");
  EXPECT_GE(program->bundled_tests()->num_cases(), 1u);
  EXPECT_TRUE(Method::load(program, "forward").ok());
  EXPECT_EQ(testing::fixture("mlp.pte")->bundled_tests(), nullptr);
}

TEST(BundledProgram, FixtureVerifies) {
  auto program = testing::fixture("mlp_bundled.bpte");
  ASSERT_NE(program, nullptr);
  auto report = verify_bundled(program);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_EQ(report->cases.size(), program->bundled_tests()->num_cases());
  EXPECT_TRUE(report->passed());
  const OutputCheck& out = report->cases[0].outputs.at(0);
  EXPECT_TRUE(out.passed);
  EXPECT_EQ(out.elements, 4u * 8);
  EXPECT_LT(out.max_abs_error, 1e-5);
}

// The exported bundles: expectations from eager PyTorch, recorded by ExecuTorch's own
// BundledProgram serializer.
TEST(BundledProgram, ExportedFixturesVerify) {
  struct Expectation {
    const char* file;
    size_t cases;
    size_t passed;
  };
  for (const Expectation& e :
       {Expectation{"multi_bundled.bpte", 6, 6}, Expectation{"cnn_bundled_xnnpack.bpte", 3, 3},
        Expectation{"mlp_bundled_wrong.bpte", 2, 1}}) {
    SCOPED_TRACE(e.file);
    auto program = testing::fixture(e.file);
    ASSERT_NE(program, nullptr);
    // cnn_bundled_xnnpack is compared at its export tolerance (rtol = atol = 1e-4).
    auto report = verify_bundled(program, {.tolerance = {.rtol = 1e-4, .atol = 1e-4}});
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    EXPECT_EQ(report->cases.size(), e.cases);
    EXPECT_EQ(report->num_passed(), e.passed);
  }
  auto multi = verify_bundled(testing::fixture("multi_bundled.bpte"));
  ASSERT_TRUE(multi.ok());
  EXPECT_EQ(multi->cases[0].method, "forward");
  EXPECT_EQ(multi->cases[3].method, "scale");
  EXPECT_EQ(multi->cases[5].case_index, 2u);
  auto wrong = verify_bundled(testing::fixture("mlp_bundled_wrong.bpte"));
  ASSERT_TRUE(wrong.ok());
  EXPECT_TRUE(wrong->cases[0].passed());
  EXPECT_NEAR(wrong->cases[1].outputs.at(0).max_abs_error, 0.01, 1e-4);
}

TEST(BundledProgram, ReportsEachCaseAndOutput) {
  auto program = load_bundle(testing::build_bundle(
      mlp_bytes(), {{"forward", {mlp_case(0), mlp_case(1, 0.01f), mlp_case(2)}}}));
  ASSERT_NE(program, nullptr);
  auto report = verify_bundled(program);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_EQ(report->cases.size(), 3u);
  EXPECT_EQ(report->num_passed(), 2u);
  EXPECT_FALSE(report->passed());
  EXPECT_TRUE(report->cases[0].passed());
  const CaseResult& bad = report->cases[1];
  EXPECT_EQ(bad.case_index, 1u);
  EXPECT_TRUE(bad.status.ok());
  ASSERT_EQ(bad.outputs.size(), 1u);
  EXPECT_FALSE(bad.outputs[0].passed);
  EXPECT_EQ(bad.outputs[0].mismatched, 32u);
  EXPECT_NEAR(bad.outputs[0].max_abs_error, 0.01, 1e-4);
  EXPECT_GT(bad.outputs[0].max_rel_error, 0);
  EXPECT_TRUE(report->cases[2].passed());

  // Within a tolerance that covers the error, every case passes.
  auto loose = verify_bundled(program, {.tolerance = {.rtol = 0, .atol = 0.011}});
  ASSERT_TRUE(loose.ok());
  EXPECT_TRUE(loose->passed());
  auto tight = verify_bundled(program, {.tolerance = {.rtol = 0, .atol = 0.009}});
  ASSERT_TRUE(tight.ok());
  EXPECT_EQ(tight->num_passed(), 2u);
}

TEST(BundledProgram, ExpectedTensorInAnotherDimOrderComparesByIndex) {
  BundleCase c = mlp_case(0);
  // The same [4, 8] values, stored column-major (dim order 1, 0).
  const BundleValue& row_major = c.expected_outputs[0];
  BundleValue column_major = row_major;
  column_major.dim_order = {1, 0};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 8; ++j) {
      std::memcpy(column_major.data.data() + (j * 4 + i) * 4,
                  row_major.data.data() + (i * 8 + j) * 4, 4);
    }
  }
  BundleCase transposed = c;
  transposed.expected_outputs[0] = column_major;
  BundleCase unlabelled = transposed;  // the same bytes read as row-major: wrong
  unlabelled.expected_outputs[0].dim_order = {0, 1};
  auto program =
      load_bundle(testing::build_bundle(mlp_bytes(), {{"forward", {transposed, unlabelled}}}));
  auto report = verify_bundled(program);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->cases[0].passed());
  EXPECT_FALSE(report->cases[1].passed());
}

TEST(BundledProgram, CaseThatCannotRunIsReportedAndOthersStillRun) {
  BundleCase two_inputs = mlp_case(0);
  two_inputs.inputs.push_back(two_inputs.inputs[0]);
  BundleCase wrong_shape = mlp_case(0);
  wrong_shape.inputs[0].sizes = {2, 32};
  BundleCase wrong_dtype = mlp_case(0);
  wrong_dtype.expected_outputs[0].scalar_type = static_cast<int8_t>(ScalarType::kInt);
  BundleCase wrong_out_shape = mlp_case(0);
  wrong_out_shape.expected_outputs[0].sizes = {8, 4};
  BundleCase int_expected = mlp_case(0);
  int_expected.expected_outputs[0] = BundleValue::of_int(3);
  auto program = load_bundle(testing::build_bundle(
      mlp_bytes(),
      {{"forward",
        {two_inputs, wrong_shape, wrong_dtype, wrong_out_shape, int_expected, mlp_case(1)}}}));
  auto report = verify_bundled(program);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->cases.size(), 6u);
  EXPECT_EQ(report->cases[0].status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(report->cases[0].status.message().find("2 input(s); the method takes 1"),
            std::string::npos)
      << report->cases[0].status.message();
  EXPECT_FALSE(report->cases[1].status.ok());
  EXPECT_EQ(report->cases[2].outputs.at(0).problem, "dtype float32, expected int32");
  EXPECT_EQ(report->cases[3].outputs.at(0).problem, "shape [4, 8], expected [8, 4]");
  EXPECT_EQ(report->cases[4].outputs.at(0).problem, "a tensor output, expected a int");
  EXPECT_TRUE(report->cases[5].passed());
  EXPECT_EQ(report->num_passed(), 1u);
}

TEST(BundledProgram, NanMatchesNanOnly) {
  BundleCase c = mlp_case(0);
  float nan = NAN;
  std::memcpy(c.expected_outputs[0].data.data(), &nan, 4);
  auto program = load_bundle(testing::build_bundle(mlp_bytes(), {{"forward", {c}}}));
  auto report = verify_bundled(program);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->cases[0].outputs.at(0).mismatched, 1u);
  EXPECT_TRUE(std::isinf(report->cases[0].outputs.at(0).max_abs_error));
}

TEST(BundledProgram, SuitesMustNameTheProgramsMethods) {
  const Status lacking = load_error(testing::build_bundle(
      mlp_bytes(), {{"forward", {mlp_case(0)}}, {"backward", {mlp_case(0)}}}));
  EXPECT_EQ(lacking.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(
      lacking.message().find("method 'backward', which the program does not have; it has: forward"),
      std::string::npos)
      << lacking.message();

  auto program = load_bundle(testing::build_bundle(mlp_bytes(), {{"forward", {mlp_case(0)}}}));
  auto only = verify_bundled(program, {.method = "forward"});
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(only->cases.size(), 1u);
  auto unknown = verify_bundled(program, {.method = "sideways"});
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("it tests: forward"), std::string::npos)
      << unknown.status().message();
}

TEST(BundledProgram, CasesLeftPastTheDeadlineOrCancelledAreNotRun) {
  auto program = load_bundle(
      testing::build_bundle(mlp_bytes(), {{"forward", {mlp_case(0), mlp_case(1), mlp_case(2)}}}));
  VerifyOptions late;
  late.limits.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto report = verify_bundled(program, late);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->cases.size(), 3u);
  for (const CaseResult& c : report->cases) {
    EXPECT_EQ(c.status.code(), StatusCode::kDeadlineExceeded) << c.status.to_string();
  }
  std::atomic<bool> cancelled{true};
  VerifyOptions stopped;
  stopped.limits.cancelled = &cancelled;
  report = verify_bundled(program, stopped);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->cases[0].status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(report->num_passed(), 0u);
}

TEST(BundledProgram, PlainProgramAndBadTolerancesAreRefused) {
  EXPECT_EQ(verify_bundled(testing::fixture("mlp.pte")).status().code(),
            StatusCode::kFailedPrecondition);
  auto program = load_bundle(testing::build_bundle(mlp_bytes(), {{"forward", {mlp_case(0)}}}));
  EXPECT_EQ(verify_bundled(program, {.tolerance = {.rtol = -1}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(verify_bundled(program, {.tolerance = {.atol = NAN}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(BundledProgram, CorruptBundlesAreClearErrors) {
  const std::vector<uint8_t> good =
      testing::build_bundle(mlp_bytes(), {{"forward", {mlp_case(0)}}});
  auto expect_invalid = [](const Status& s, const std::string& text) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidProgram) << s.to_string();
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  };
  expect_invalid(load_error({good.begin(), good.begin() + static_cast<long>(good.size() / 2)}),
                 "the bundled program's flatbuffer is malformed");

  BundleCase short_data = mlp_case(0);
  short_data.inputs[0].data.resize(8);
  expect_invalid(load_error(testing::build_bundle(mlp_bytes(), {{"forward", {short_data}}})),
                 "input 0: float32 [4, 16] needs 256 bytes of data; the file holds 8");

  BundleCase bad_order = mlp_case(0);
  bad_order.inputs[0].dim_order = {0, 0};
  expect_invalid(load_error(testing::build_bundle(mlp_bytes(), {{"forward", {bad_order}}})),
                 "is not a permutation");

  BundleCase bad_type = mlp_case(0);
  bad_type.expected_outputs[0].scalar_type = 99;
  expect_invalid(load_error(testing::build_bundle(mlp_bytes(), {{"forward", {bad_type}}})),
                 "test case 0 of method 'forward'");

  expect_invalid(load_error(testing::build_bundle(mlp_bytes(), {{"forward", {}}, {"forward", {}}})),
                 "method 'forward' has two test suites");

  BundleCase no_body = mlp_case(0);
  no_body.expected_outputs[0].without_body = true;
  expect_invalid(load_error(testing::build_bundle(mlp_bytes(), {{"forward", {no_body}}})),
                 "expected output 0: a value of kind 1 carries nothing");

  // A flatbuffer may name one case many times: the values are counted, not the bytes.
  const std::vector<BundleCase> many(100'001);
  expect_invalid(load_error(testing::build_bundle(mlp_bytes(), {{"forward", many}})),
                 "more than 100000 test values");

  std::vector<uint8_t> broken_program = mlp_bytes();
  broken_program.resize(broken_program.size() / 2);
  const Status inner = load_error(testing::build_bundle(broken_program, {}));
  EXPECT_FALSE(inner.ok());
  EXPECT_NE(inner.message().find("the program inside the bundle"), std::string::npos)
      << inner.message();

  const Status nested =
      load_error(testing::build_bundle(testing::build_bundle(mlp_bytes(), {}), {}));
  EXPECT_NE(nested.message().find("not a bundle inside a bundle"), std::string::npos)
      << nested.message();
}

}  // namespace
}  // namespace et
