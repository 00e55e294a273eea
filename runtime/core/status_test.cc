#include "runtime/core/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace et {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return invalid_argument("value must be positive, got " + std::to_string(v));
  return v;
}

Result<int> doubled(int v) {
  ET_ASSIGN_OR_RETURN(int x, parse_positive(v));
  return 2 * x;
}

Status check_all(int a, int b) {
  ET_RETURN_IF_ERROR(parse_positive(a));
  ET_RETURN_IF_ERROR(parse_positive(b).status().with_context("second"));
  return Status();
}

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.to_string(), "OK");
}

TEST(Status, ErrorCarriesCodeAndMessage) {
  Status s = invalid_program("root offset 99 is past the end");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_EQ(s.to_string(), "InvalidProgram: root offset 99 is past the end");
  EXPECT_EQ(s.with_context("model.pte").message(), "model.pte: root offset 99 is past the end");
}

TEST(Result, HoldsValueOrStatus) {
  Result<int> good = parse_positive(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  EXPECT_TRUE(good.status().ok());

  Result<int> bad = parse_positive(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "value must be positive, got -1");
}

TEST(Result, FromOkStatusIsAnInternalError) {
  Result<int> r{Status()};
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(Result, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(Macros, PropagateFirstError) {
  EXPECT_EQ(*doubled(4), 8);
  EXPECT_EQ(doubled(0).status().message(), "value must be positive, got 0");
  EXPECT_TRUE(check_all(1, 2).ok());
  EXPECT_EQ(check_all(1, -2).message(), "second: value must be positive, got -2");
}

TEST(ResultDeathTest, ValueOfFailedResultAborts) {
  Result<int> bad = parse_positive(-5);
  EXPECT_DEATH((void)bad.value(), "value must be positive, got -5");
}

}  // namespace
}  // namespace et
