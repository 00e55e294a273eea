#include "kernels/util/type_promotion.h"

#include <gtest/gtest.h>

#include <vector>

namespace et::kernels {
namespace {

using ST = ScalarType;

TEST(PromoteTypes, MatchesTorch) {
  EXPECT_EQ(promote_types(ST::kByte, ST::kChar), ST::kShort);
  EXPECT_EQ(promote_types(ST::kByte, ST::kInt), ST::kInt);
  EXPECT_EQ(promote_types(ST::kChar, ST::kLong), ST::kLong);
  EXPECT_EQ(promote_types(ST::kBool, ST::kByte), ST::kByte);
  EXPECT_EQ(promote_types(ST::kInt, ST::kHalf), ST::kHalf);
  EXPECT_EQ(promote_types(ST::kHalf, ST::kBFloat16), ST::kFloat);
  EXPECT_EQ(promote_types(ST::kHalf, ST::kFloat), ST::kFloat);
  EXPECT_EQ(promote_types(ST::kBFloat16, ST::kDouble), ST::kDouble);
  EXPECT_EQ(promote_types(ST::kLong, ST::kFloat), ST::kFloat);
}

Tensor tensor(ST dtype, std::vector<int32_t> sizes) {
  std::vector<uint8_t> order(sizes.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<uint8_t>(d);
  return Tensor(dtype, sizes, order, ShapeDynamism::kStatic);
}

Scalar int_scalar() { return Scalar{ValueKind::kInt, 2, 0, false}; }
Scalar float_scalar() { return Scalar{ValueKind::kDouble, 0, 2.5, false}; }

TEST(ResultType, ScalarsAndZeroDimTensorsOnlyRaiseTheCategory) {
  // int32 tensor * 2 -> int32; int32 tensor * 2.5 -> float32 (default dtype).
  EXPECT_EQ(ResultType().add(tensor(ST::kInt, {3})).add(int_scalar()).get(), ST::kInt);
  EXPECT_EQ(ResultType().add(tensor(ST::kInt, {3})).add(float_scalar()).get(), ST::kFloat);
  // float16 tensor * 2.5 stays float16; a float64 0-d tensor does not widen a float32 one.
  EXPECT_EQ(ResultType().add(tensor(ST::kHalf, {3})).add(float_scalar()).get(), ST::kHalf);
  EXPECT_EQ(ResultType().add(tensor(ST::kFloat, {3})).add(tensor(ST::kDouble, {})).get(),
            ST::kFloat);
  // int8 tensor + int64 0-d tensor -> int8; int8 tensor + float64 0-d tensor -> float64.
  EXPECT_EQ(ResultType().add(tensor(ST::kChar, {3})).add(tensor(ST::kLong, {})).get(), ST::kChar);
  EXPECT_EQ(ResultType().add(tensor(ST::kChar, {3})).add(tensor(ST::kDouble, {})).get(),
            ST::kDouble);
  // bool tensor + 1 -> int64.
  EXPECT_EQ(ResultType().add(tensor(ST::kBool, {3})).add(int_scalar()).get(), ST::kLong);
  // two tensors with dims promote normally.
  EXPECT_EQ(ResultType().add(tensor(ST::kInt, {3})).add(tensor(ST::kFloat, {3})).get(), ST::kFloat);
}

TEST(CanCast, NoFloatToIntNoNumberToBool) {
  EXPECT_TRUE(can_cast(ST::kInt, ST::kFloat));
  EXPECT_FALSE(can_cast(ST::kFloat, ST::kInt));
  EXPECT_FALSE(can_cast(ST::kInt, ST::kBool));
  EXPECT_TRUE(can_cast(ST::kBool, ST::kByte));
}

}  // namespace
}  // namespace et::kernels
