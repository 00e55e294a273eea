#include "backends/xnnpack/graph.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "backends/xnnpack/compiled_graph.h"
#include "backends/xnnpack/testing/payload_builder.h"
#include "backends/xnnpack/testing/run_once.h"

namespace et::xnn {
namespace {

using testing::PayloadBuilder;

Result<std::span<const uint8_t>> no_named_data(std::string_view key) {
  return not_found(std::string(key));
}

// in [2,3] -> FC(w [4,3], b [4]) -> out [2,4]
PayloadBuilder small_graph() {
  PayloadBuilder b;
  const uint32_t in = b.input({2, 3});
  const uint32_t out = b.output({2, 4});
  const uint32_t w = b.constant({4, 3}, std::vector<float>(12, 0.5f));
  const uint32_t bias = b.constant({4}, {1, 2, 3, 4});
  b.fully_connected(in, w, bias, out);
  return b;
}

void expect_error(const Result<Graph>& r, StatusCode code, std::string_view text) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().to_string();
}

TEST(ParseGraph, ReadsValuesNodesExternalsAndConstants) {
  std::vector<uint8_t> payload = small_graph().finish();
  auto g = parse_graph(payload, no_named_data);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->nodes[0].type, NodeType::kFullyConnected);
  EXPECT_EQ(g->externals, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(g->num_inputs, 1u);
  EXPECT_EQ(g->values[2].dims, (std::vector<size_t>{4, 3}));
  ASSERT_NE(g->values[3].data, nullptr);
  EXPECT_EQ(static_cast<const float*>(g->values[3].data)[3], 4.0f);
}

TEST(ParseGraph, AcceptsABareFlatbuffer) {
  PayloadBuilder b;
  const uint32_t in = b.input({4});
  const uint32_t out = b.output({4});
  b.unary(NodeType::kTanh, in, out);
  auto g = parse_graph(b.finish(/*with_header=*/false), no_named_data);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(g->nodes[0].type, NodeType::kTanh);
}

TEST(ParseGraph, RefusesTruncatedHeader) {
  std::vector<uint8_t> payload = small_graph().finish();
  payload.resize(20);
  expect_error(parse_graph(payload, no_named_data), StatusCode::kInvalidProgram,
               "header truncated");
}

TEST(ParseGraph, RefusesFlatbufferOutsideThePayload) {
  std::vector<uint8_t> payload = small_graph().finish();
  const uint32_t huge = 1u << 30;
  std::memcpy(payload.data() + 14, &huge, 4);
  expect_error(parse_graph(payload, no_named_data), StatusCode::kInvalidProgram, "lies outside");
}

TEST(ParseGraph, RefusesConstantSectionOutsideThePayload) {
  std::vector<uint8_t> payload = small_graph().finish();
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(payload.data() + 22, &huge, 8);
  expect_error(parse_graph(payload, no_named_data), StatusCode::kInvalidProgram, "constant data");
}

TEST(ParseGraph, RefusesAWrongIdentifier) {
  std::vector<uint8_t> payload = small_graph().finish();
  std::memcpy(payload.data() + 32 + 4, "ZZ00", 4);
  expect_error(parse_graph(payload, no_named_data), StatusCode::kInvalidProgram, "XN00");
}

TEST(ParseGraph, RefusesANodeReadingAnUndefinedValue) {
  PayloadBuilder b;
  b.input({4});
  const uint32_t out = b.output({4});
  b.unary(NodeType::kAbs, 7, out);
  expect_error(parse_graph(b.finish(), no_named_data), StatusCode::kInvalidProgram,
               "reads value 7, which is not defined");
}

TEST(ParseGraph, RefusesAnExternalIdOutOfRange) {
  PayloadBuilder b;
  const uint32_t in = b.value(DataType::kFp32, {4}, kExternalInput, 9, 0, 0);
  const uint32_t out = b.output({4});
  b.unary(NodeType::kAbs, in, out);
  expect_error(parse_graph(b.finish(), no_named_data), StatusCode::kInvalidProgram, "external id");
}

TEST(ParseGraph, RefusesAConstantIndexOutOfRange) {
  PayloadBuilder b;
  const uint32_t in = b.input({4});
  const uint32_t out = b.output({4});
  b.constant({4}, {1, 2, 3, 4});
  const uint32_t bad = b.value(DataType::kFp32, {4}, 0, kNoValue, 5, 3);
  b.binary(NodeType::kAdd, in, bad, out);
  expect_error(parse_graph(b.finish(), no_named_data), StatusCode::kInvalidProgram,
               "constant index 5 is out of range");
}

TEST(ParseGraph, RefusesAConstantSmallerThanItsDims) {
  PayloadBuilder b;
  const uint32_t in = b.input({4});
  const uint32_t out = b.output({4});
  const uint32_t c = b.constant({8}, {1, 2, 3, 4});  // 16 bytes for 32
  b.binary(NodeType::kAdd, in, c, out);
  expect_error(parse_graph(b.finish(), no_named_data), StatusCode::kInvalidProgram,
               "constant holds 16 bytes");
}

TEST(ParseGraph, RefusesANodeWritingAnInput) {
  PayloadBuilder b;
  const uint32_t in = b.input({4});
  b.output({4});
  b.unary(NodeType::kAbs, in, in);
  expect_error(parse_graph(b.finish(), no_named_data), StatusCode::kInvalidProgram,
               "constant or an input");
}

TEST(ParseGraph, RefusesUnknownDataTypesAndTooManyDims) {
  PayloadBuilder b;
  const uint32_t in = b.value(DataType::kQbInt4, {4}, kExternalInput, 0, 0, 0);
  const uint32_t out = b.output({4});
  b.unary(NodeType::kAbs, in, out);
  expect_error(parse_graph(b.finish(), no_named_data), StatusCode::kNotSupported, "qbint4");

  PayloadBuilder deep;
  const uint32_t x = deep.input({1, 1, 1, 1, 1, 1, 2});
  const uint32_t y = deep.output({2});
  deep.unary(NodeType::kAbs, x, y);
  expect_error(parse_graph(deep.finish(), no_named_data), StatusCode::kNotSupported, "7 dims");
}

// Inputs the payload fuzzer once crashed on (tests/fuzz/xnnpack_regressions/): each is
// refused, or parsed, planned, compiled and run once without a crash, as the fuzzer
// drives it.
TEST(ParseGraph, FuzzRegressionsRunSafely) {
  auto zeros = [](std::string_view) -> Result<std::span<const uint8_t>> {
    static const std::vector<uint8_t> bytes(size_t{8} << 20, 0);
    return std::span<const uint8_t>(bytes);
  };
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ET_XNNPACK_REGRESSIONS_DIR)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                     std::istreambuf_iterator<char>()};
    auto graph = parse_graph(bytes, zeros);
    ++files;
    if (!graph.ok()) continue;
    auto compiled = CompiledGraph::create(std::move(graph).value(), {});
    if (!compiled.ok()) continue;
    (void)testing::run_once(**compiled);
  }
  EXPECT_GT(files, 0u) << "no regression inputs in " << ET_XNNPACK_REGRESSIONS_DIR;
}

TEST(ParseGraph, EveryTruncationIsRefusedWithoutCrashing) {
  const std::vector<uint8_t> payload = small_graph().finish();
  for (size_t n = 0; n < payload.size(); ++n) {
    std::vector<uint8_t> cut(payload.begin(), payload.begin() + static_cast<long>(n));
    EXPECT_FALSE(parse_graph(cut, no_named_data).ok()) << "length " << n;
  }
}

TEST(ParseGraph, EveryByteFlipIsRefusedOrParsedWithoutCrashing) {
  const std::vector<uint8_t> payload = small_graph().finish();
  size_t refused = 0;
  for (size_t i = 0; i < payload.size(); ++i) {
    std::vector<uint8_t> bad = payload;
    bad[i] ^= 0xA5;
    refused += !parse_graph(bad, no_named_data).ok();
  }
  EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace et::xnn
