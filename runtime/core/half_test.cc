#include "runtime/core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace et {
namespace {

TEST(Half, ExactValuesRoundTrip) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 0.000061035156f /* smallest normal */,
                  5.9604645e-08f /* smallest subnormal */, 512.5f}) {
    EXPECT_EQ(static_cast<float>(Half(f)), f) << f;
  }
}

TEST(Half, RoundsToNearestEven) {
  // 2049 lies halfway between 2048 and 2050 (spacing 2): ties go to even (2048).
  EXPECT_EQ(static_cast<float>(Half(2049.0f)), 2048.0f);
  EXPECT_EQ(static_cast<float>(Half(2051.0f)), 2052.0f);
  EXPECT_EQ(static_cast<float>(Half(2049.5f)), 2050.0f);
}

TEST(Half, OverflowNanAndSubnormals) {
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(70000.0f))));
  EXPECT_EQ(static_cast<float>(Half(65519.0f)), 65504.0f);  // just below the rounding edge
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(65520.0f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(static_cast<float>(Half(1e-9f)), 0.0f);
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.0f).bits, 0xc000);
  EXPECT_FLOAT_EQ(static_cast<float>(Half::from_bits(0x0200)), 3.0517578e-05f);  // subnormal
}

TEST(Half, EveryBitPatternSurvivesFloatAndBack) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const Half h = Half::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    if (std::isnan(f)) continue;
    EXPECT_EQ(Half(f).bits, b) << std::hex << b;
  }
}

TEST(BFloat16, RoundsToNearestEvenAndKeepsNan) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to even (1).
  EXPECT_EQ(static_cast<float>(BFloat16(1.00390625f)), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(1.01171875f)), 1.015625f);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = BFloat16::from_bits(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      EXPECT_EQ(BFloat16(f).bits, b) << std::hex << b;
    }
  }
}

}  // namespace
}  // namespace et
