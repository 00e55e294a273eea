// Each refusal of DESIGN.md section 4 that the runtime owns, one test apiece.
#include "runtime/core/input.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace et {
namespace {

constexpr uint8_t kContiguous4[] = {0, 1, 2, 3};
constexpr uint8_t kChannelsLast[] = {0, 2, 3, 1};

// A declared input: float32 [2, 3, 4, 5] in `dim_order`.
Tensor declared(std::span<const uint8_t> dim_order = kContiguous4,
                ShapeDynamism dynamism = ShapeDynamism::kStatic) {
  static constexpr int32_t kSizes[] = {2, 3, 4, 5};
  return Tensor(ScalarType::kFloat, kSizes, dim_order, dynamism);
}

struct View {
  std::vector<int64_t> sizes = {2, 3, 4, 5};
  std::vector<int64_t> strides;  // empty: no layout stated
  std::vector<float> storage = std::vector<float>(120, 1.0f);
  ScalarType dtype = ScalarType::kFloat;
  DeviceType device = DeviceType::kCpu;

  TensorView view() {
    TensorView v;
    v.data = storage.data();
    v.nbytes = storage.size() * sizeof(float);
    v.dtype = dtype;
    v.sizes = sizes;
    v.strides = strides;
    v.device = device;
    return v;
  }
};

std::string message_of(const Tensor& t, View& v) {
  return check_tensor_input(0, t, v.view()).message();
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(InputCheck, MatchingInputPasses) {
  View v;
  EXPECT_TRUE(check_tensor_input(0, declared(), v.view()).ok());
  v.strides = {60, 20, 5, 1};
  EXPECT_TRUE(check_tensor_input(0, declared(), v.view()).ok());
}

TEST(InputCheck, NoStatedLayoutIsAccepted) {
  View v;
  v.strides.clear();
  EXPECT_TRUE(check_tensor_input(0, declared(kChannelsLast), v.view()).ok());
}

TEST(InputCheck, ChannelsLastIntoContiguousMethodIsRefused) {
  View v;
  v.strides = {60, 1, 15, 3};  // NCHW sizes, NHWC memory
  const std::string m = message_of(declared(), v);
  EXPECT_TRUE(mentions(m, "input 0")) << m;
  EXPECT_TRUE(mentions(m, "(0, 2, 3, 1) (channels-last)")) << m;
  EXPECT_TRUE(mentions(m, "(0, 1, 2, 3) (contiguous)")) << m;
}

TEST(InputCheck, ContiguousIntoChannelsLastMethodIsRefused) {
  View v;
  v.strides = {60, 20, 5, 1};
  const std::string m = message_of(declared(kChannelsLast), v);
  EXPECT_TRUE(mentions(m, "expects (0, 2, 3, 1) (channels-last)")) << m;
}

TEST(InputCheck, ChannelsLastIntoChannelsLastMethodPasses) {
  View v;
  v.strides = {60, 1, 15, 3};
  EXPECT_TRUE(check_tensor_input(0, declared(kChannelsLast), v.view()).ok());
}

TEST(InputCheck, SizeOneDimsCarryNoLayout) {
  static constexpr int32_t kSizes[] = {1, 3, 1, 1};
  Tensor t(ScalarType::kFloat, kSizes, kContiguous4, ShapeDynamism::kStatic);
  View v;
  v.sizes = {1, 3, 1, 1};
  v.strides = {999, 1, 7, 42};  // only dim 1 matters
  EXPECT_TRUE(check_tensor_input(0, t, v.view()).ok()) << message_of(t, v);
  v.strides = {999, 2, 7, 42};
  EXPECT_FALSE(check_tensor_input(0, t, v.view()).ok());
}

TEST(InputCheck, LayoutNoDimOrderDescribesIsRefused) {
  View v;
  v.strides = {120, 40, 10, 2};  // every other element: a strided view
  const std::string m = message_of(declared(), v);
  EXPECT_TRUE(mentions(m, "no dim order describes")) << m;
  EXPECT_TRUE(mentions(m, "contiguous")) << m;
}

TEST(InputCheck, DtypeMismatchNamesBoth) {
  View v;
  v.dtype = ScalarType::kDouble;
  const std::string m = message_of(declared(), v);
  EXPECT_TRUE(mentions(m, "float64")) << m;
  EXPECT_TRUE(mentions(m, "float32")) << m;
}

TEST(InputCheck, RankAboveSixteenIsRefusedBeforeStrides) {
  View v;
  v.sizes.assign(17, 1);
  v.strides.assign(3, 1);  // inconsistent too: the rank check must come first
  const std::string m = message_of(declared(), v);
  EXPECT_TRUE(mentions(m, "rank 17; the runtime supports at most 16")) << m;
}

TEST(InputCheck, SizeBeyondSizeTypeIsRefusedEvenWhenEmpty) {
  View v;
  v.sizes = {0, 3, 4, 3'000'000'000LL};  // zero elements, one size too large
  const std::string m = message_of(declared(), v);
  EXPECT_TRUE(mentions(m, "32-bit size type")) << m;
  v.sizes = {2, -3, 4, 5};
  EXPECT_TRUE(mentions(message_of(declared(), v), "32-bit size type"));
}

TEST(InputCheck, ShapeMismatchIsRefused) {
  View v;
  v.sizes = {2, 3, 4, 6};
  EXPECT_TRUE(mentions(message_of(declared(), v), "expects [2, 3, 4, 5]"));
  v.sizes = {2, 3, 20};
  EXPECT_TRUE(mentions(message_of(declared(), v), "rank 4"));
}

TEST(InputCheck, DynamicShapeWithinBoundsPasses) {
  Tensor t = declared(kContiguous4, ShapeDynamism::kDynamicBound);
  View v;
  v.sizes = {1, 3, 4, 5};
  EXPECT_TRUE(check_tensor_input(0, t, v.view()).ok());
  v.sizes = {3, 3, 4, 5};
  EXPECT_TRUE(mentions(message_of(t, v), "at most [2, 3, 4, 5]"));
}

TEST(InputCheck, DeviceMemoryIsRefused) {
  View v;
  v.device = DeviceType::kCuda;
  Status s = check_tensor_input(0, declared(), v.view());
  EXPECT_EQ(s.code(), StatusCode::kNotSupported);
  EXPECT_TRUE(mentions(s.message(), "device memory"));
}

TEST(InputCheck, TensorWithNoMemoryIsRefused) {
  View v;
  TensorView view = v.view();
  view.data = nullptr;
  EXPECT_TRUE(mentions(check_tensor_input(0, declared(), view).message(), "no memory"));
}

TEST(InputCheck, MemoryTooSmallIsRefused) {
  View v;
  TensorView view = v.view();
  view.nbytes = 100;
  EXPECT_TRUE(mentions(check_tensor_input(0, declared(), view).message(), "needs 480 bytes"));
}

TEST(InputCheck, DimOrderFromStrides) {
  std::array<uint8_t, 4> order{};
  const int64_t sizes[] = {2, 3, 4, 5};
  const int64_t nhwc[] = {60, 1, 15, 3};
  ASSERT_TRUE(dim_order_from_strides(sizes, nhwc, order));
  EXPECT_EQ(order, (std::array<uint8_t, 4>{0, 2, 3, 1}));
  const int64_t strided[] = {120, 40, 10, 2};
  EXPECT_FALSE(dim_order_from_strides(sizes, strided, order));
}

}  // namespace
}  // namespace et
