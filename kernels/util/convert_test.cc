#include "kernels/util/convert.h"

#include <gtest/gtest.h>

#include <limits>

namespace et::kernels {
namespace {

TEST(ConvertValue, FloatToIntTruncatesTowardZero) {
  EXPECT_EQ(convert_value<int32_t>(2.9f), 2);
  EXPECT_EQ(convert_value<int32_t>(-2.9f), -2);
  EXPECT_EQ(convert_value<int64_t>(-7.5), -7);
}

TEST(ConvertValue, OutOfRangeAndNanGiveTheMinimumLikeX86) {
  EXPECT_EQ(convert_value<int32_t>(3e9f), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(convert_value<int32_t>(std::nanf("")), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(convert_value<int64_t>(1e30), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(convert_value<int32_t>(-2147483648.0), std::numeric_limits<int32_t>::min());
}

TEST(ConvertValue, NarrowIntegersWrapThroughInt64) {
  EXPECT_EQ(convert_value<uint8_t>(300.0f), 44);
  EXPECT_EQ(convert_value<int8_t>(-1.5f), -1);
  EXPECT_EQ(convert_value<uint8_t>(int64_t{-1}), 255);
}

TEST(ConvertValue, Bool) {
  EXPECT_TRUE(convert_value<bool>(0.5f));
  EXPECT_FALSE(convert_value<bool>(0.0));
  EXPECT_TRUE(convert_value<bool>(std::nanf("")));
  EXPECT_EQ(convert_value<float>(true), 1.0f);
}

}  // namespace
}  // namespace et::kernels
