// Payloads that pass the shape rules but that the installed XNNPACK would abort on
// (an assert) or write past an output for: each must be refused at compile time,
// naming the limit. Without a rule, the test runs the compiled graph once, so the
// failure shows (an abort, an ASan report, or this test's own failure).
#include "backends/xnnpack/xnnpack_limits.h"

#include <gtest/gtest.h>

#include "backends/xnnpack/compiled_graph.h"
#include "backends/xnnpack/testing/payload_builder.h"
#include "backends/xnnpack/testing/run_once.h"

namespace et::xnn {
namespace {

using testing::PayloadBuilder;
using Quant = PayloadBuilder::Quant;

Result<std::span<const uint8_t>> no_named_data(std::string_view key) {
  return not_found(std::string(key));
}

Result<std::shared_ptr<CompiledGraph>> compile(PayloadBuilder& b, std::vector<uint8_t>& payload) {
  payload = b.finish();
  ET_ASSIGN_OR_RETURN(Graph g, parse_graph(payload, no_named_data));
  return CompiledGraph::create(std::move(g), CompileOptions{});
}

void expect_refused(PayloadBuilder& b, StatusCode code, std::string_view says) {
  std::vector<uint8_t> payload;
  auto built = compile(b, payload);
  if (built.ok()) {
    Status ran = testing::run_once(**built, 0.0f);
    FAIL() << "compiled (and ran: " << ran.to_string() << "); expected a refusal saying '" << says
           << "'";
  }
  EXPECT_EQ(built.status().code(), code) << built.status().to_string();
  EXPECT_NE(built.status().message().find(says), std::string::npos) << built.status().message();
}

Quant per_tensor(float scale, int32_t zero_point = 0) {
  Quant q;
  q.scale = scale;
  q.zero_point = zero_point;
  return q;
}

std::vector<float> zeros(size_t n) { return std::vector<float>(n, 0.0f); }

TEST(XnnpackLimits, StridedTransposedConvWithAnOutputSmallerThanTheStride) {
  // XNNPACK sizes each sub-convolution by (output - offset) / stride, unsigned.
  PayloadBuilder b;
  const uint32_t in = b.input({1, 1, 1, 1});
  const uint32_t out = b.output({1, 1, 1, 1});
  const uint32_t w = b.constant({1, 3, 3, 1}, zeros(9));
  b.conv(NodeType::kConvTranspose2d, {1, 1, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1, 1}, in, w, kNoValue, out);
  expect_refused(b, StatusCode::kNotSupported, "smaller than the stride");
}

TEST(XnnpackLimits, TransposedConvAdjustmentNotSmallerThanTheStride) {
  PayloadBuilder b;
  const uint32_t in = b.input({1, 2, 2, 1});
  const uint32_t out = b.output({1, 7, 7, 1});  // 2 * (2 - 1) + 2 + 3
  const uint32_t w = b.constant({1, 3, 3, 1}, zeros(9));
  b.conv(NodeType::kConvTranspose2d, {0, 0, 0, 0, 3, 3, 2, 2, 1, 1, 1, 1, 1, 2, 2}, in, w, kNoValue,
         out);
  expect_refused(b, StatusCode::kNotSupported, "output adjustment 2x2");
}

TEST(XnnpackLimits, PaddingsThatOverflowThirtyTwoBits) {
  // A huge stride and adjustment make the 2^32 of padding fit our arithmetic;
  // XNNPACK's 32-bit sum would wrap it to 0 and size a 2^32-row output.
  PayloadBuilder b;
  const uint32_t in = b.input({1, 2, 1, 1});
  const uint32_t out = b.output({1, 6, 1, 1});  // (2^32 - 1) + 6 + 1 - 2^32
  const uint32_t w = b.constant({1, 1, 1, 1}, zeros(1));
  b.conv(NodeType::kConvTranspose2d,
         {0x80000000u, 0, 0x80000000u, 0, 1, 1, 0xFFFFFFFFu, 1, 1, 1, 1, 1, 1, 6, 0}, in, w,
         kNoValue, out);
  expect_refused(b, StatusCode::kInvalidProgram, "paddings add up to 4294967296");
}

TEST(XnnpackLimits, QuantizedConvWithATinyRequantizationScale) {
  PayloadBuilder b;
  const uint32_t in = b.quantized_input({1, 2, 2, 1}, DataType::kQInt8, per_tensor(1e-6f));
  const uint32_t out = b.quantized_output({1, 2, 2, 1}, DataType::kQInt8, per_tensor(1e3f));
  const uint32_t w = b.quantized_constant({1, 1, 1, 1}, DataType::kQInt8, per_tensor(1e-6f), {1});
  b.conv(NodeType::kConv2d, {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1}, in, w, kNoValue, out);
  expect_refused(b, StatusCode::kNotSupported, "requantization scale");
}

TEST(XnnpackLimits, QuantizedConvWithAnOrdinaryScaleRuns) {
  // The control for the test above: the same node at sane scales compiles and runs.
  PayloadBuilder b;
  const uint32_t in = b.quantized_input({1, 2, 2, 1}, DataType::kQInt8, per_tensor(0.5f));
  const uint32_t out = b.quantized_output({1, 2, 2, 1}, DataType::kQInt8, per_tensor(0.5f));
  const uint32_t w = b.quantized_constant({1, 1, 1, 1}, DataType::kQInt8, per_tensor(0.5f), {2});
  b.conv(NodeType::kConv2d, {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1}, in, w, kNoValue, out);
  std::vector<uint8_t> payload;
  auto built = compile(b, payload);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  EXPECT_TRUE(testing::run_once(**built, 0.0f).ok());
}

TEST(XnnpackLimits, QuantizedFullyConnectedWithATinyRequantizationScale) {
  PayloadBuilder b;
  const uint32_t in = b.quantized_input({2, 1}, DataType::kQUInt8, per_tensor(1e-6f, 128));
  const uint32_t out = b.quantized_output({2, 1}, DataType::kQUInt8, per_tensor(1e3f, 128));
  const uint32_t w = b.quantized_constant({1, 1}, DataType::kQUInt8, per_tensor(1e-6f, 128), {129});
  b.fully_connected(in, w, kNoValue, out);
  expect_refused(b, StatusCode::kNotSupported, "requantization scale");
}

TEST(XnnpackLimits, PerChannelFilterScalesAlongTheWrongDim) {
  // Filter [out=2, 1, 1, in=3] with its scales along the input channels.
  PayloadBuilder b;
  const uint32_t in = b.quantized_input({1, 2, 2, 3}, DataType::kQInt8, per_tensor(0.5f));
  const uint32_t out = b.quantized_output({1, 2, 2, 2}, DataType::kQInt8, per_tensor(0.5f));
  Quant per_channel;
  per_channel.channel_scales = {0.5f, 0.5f, 0.5f};
  per_channel.channel_dim = 3;
  const uint32_t w = b.quantized_constant({2, 1, 1, 3}, DataType::kQcInt8, per_channel,
                                          std::vector<uint8_t>(6, 1));
  b.conv(NodeType::kConv2d, {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 3, 2, 1}, in, w, kNoValue, out);
  expect_refused(b, StatusCode::kInvalidProgram, "scales run along dim 3");
}

TEST(XnnpackLimits, QuantizedGlobalAveragePoolingOverAHugePlane) {
  // 1 / (H * W) folds into the scale: 2^-8 / 2^24 is below XNNPACK's 2^-32.
  PayloadBuilder b;
  const uint32_t in =
      b.quantized_input({1, 4096, 4097, 1}, DataType::kQUInt8, per_tensor(1.0f / 256));
  const uint32_t out = b.quantized_output({1, 1, 1, 1}, DataType::kQUInt8, per_tensor(1.0f));
  b.unary(NodeType::kGlobalAvgPooling2d, in, out);
  expect_refused(b, StatusCode::kNotSupported, "requantization scale");
}

TEST(XnnpackLimits, BilinearResizeToAHugeWidth) {
  // Float rounding puts a source coordinate on the input's edge (XNNPACK asserts).
  PayloadBuilder b;
  const uint32_t in = b.input({1, 1, 9, 1});
  const uint32_t out = b.output({1, 1, 9071678, 1});
  b.resize_bilinear(1, 9071678, in, out, /*flags=*/0x4);
  expect_refused(b, StatusCode::kNotSupported, "exact only below");
}

TEST(XnnpackLimits, AveragePoolingWithDilation) {
  // XNNPACK's average pooling has no dilation: it would write a 6x6 result here.
  PayloadBuilder b;
  const uint32_t in = b.input({1, 8, 8, 1});
  const uint32_t out = b.output({1, 4, 4, 1});
  b.pooling(NodeType::kAvgPooling2d, {0, 0, 0, 0, 3, 3, 1, 1, 2, 2}, in, out);
  expect_refused(b, StatusCode::kNotSupported, "dilation 2x2");
}

TEST(XnnpackLimits, ArgMaxPoolingIndicesNarrowerThanThirtyTwoBits) {
  PayloadBuilder b;
  const uint32_t in = b.input({1, 4, 4, 1});
  const uint32_t out = b.output({1, 2, 2, 1});
  const uint32_t index = b.output({1, 2, 2, 1}, DataType::kQInt8);
  b.argmax_pooling({0, 0, 0, 0, 2, 2}, in, out, index);
  expect_refused(b, StatusCode::kInvalidProgram, "32-bit indices");
}

}  // namespace
}  // namespace et::xnn
