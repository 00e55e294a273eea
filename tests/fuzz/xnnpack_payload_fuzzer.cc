// libFuzzer target: arbitrary bytes as an XNNPACK delegate payload, driven through
// parsing, planning, compiling with XNNPACK and one run on buffers of exactly the
// values' sizes. Seeded (besides the fixtures' payloads in tests/fuzz/xnnpack_seeds)
// with quantized graphs and Copy nodes between data types, written into the corpus
// directory at start. Build with scripts/fuzz.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "backends/xnnpack/compiled_graph.h"
#include "backends/xnnpack/testing/payload_builder.h"
#include "backends/xnnpack/testing/run_once.h"

namespace {

constexpr size_t kLimit = size_t{64} << 20;

// Every named constant resolves to zeros, so graphs seeded from real programs get past
// constant resolution and reach planning and XNNPACK.
et::Result<std::span<const uint8_t>> zeros(std::string_view) {
  static const std::vector<uint8_t> bytes(size_t{8} << 20, 0);
  return std::span<const uint8_t>(bytes);
}

using et::xnn::DataType;
using et::xnn::NodeType;
using et::xnn::testing::PayloadBuilder;

void write_seed(const std::string& dir, const std::string& name, PayloadBuilder& b) {
  const std::vector<uint8_t> bytes = b.finish();
  std::ofstream(dir + "/" + name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

// Seeds the corpus directory (the last non-flag argument) with graphs the fixtures
// lack: quantized nodes and Copy nodes whose input and output types differ.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::string dir;
  for (int i = 1; i < *argc; ++i) {
    if ((*argv)[i][0] != '-') dir = (*argv)[i];
  }
  if (dir.empty()) return 0;
  PayloadBuilder::Quant q;
  q.scale = 0.05f;
  {
    PayloadBuilder b;  // quantized fully connected
    const uint32_t in = b.quantized_input({2, 8}, DataType::kQInt8, q);
    const uint32_t out = b.quantized_output({2, 4}, DataType::kQInt8, q);
    const uint32_t w =
        b.quantized_constant({4, 8}, DataType::kQInt8, q, std::vector<uint8_t>(32, 3));
    b.fully_connected(in, w, et::xnn::kNoValue, out);
    write_seed(dir, "seed-quantized-fc", b);
  }
  {
    PayloadBuilder b;  // quantized convolution, per-channel filter scales
    const uint32_t in = b.quantized_input({1, 4, 4, 2}, DataType::kQInt8, q);
    const uint32_t out = b.quantized_output({1, 4, 4, 3}, DataType::kQInt8, q);
    PayloadBuilder::Quant per_channel = q;
    per_channel.channel_scales = {0.1f, 0.2f, 0.3f};
    const uint32_t w = b.quantized_constant({3, 3, 3, 2}, DataType::kQcInt8, per_channel,
                                            std::vector<uint8_t>(54, 1));
    b.conv(NodeType::kConv2d, {1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 2, 3, 1}, in, w, et::xnn::kNoValue,
           out);
    write_seed(dir, "seed-quantized-conv", b);
  }
  const std::pair<DataType, DataType> copies[] = {{DataType::kQInt8, DataType::kQInt32},
                                                  {DataType::kFp16, DataType::kQInt32},
                                                  {DataType::kQInt32, DataType::kQInt8}};
  int k = 0;
  for (const auto& [from, to] : copies) {
    PayloadBuilder b;  // refused at planning: a Copy must keep its data type
    const uint32_t in = b.quantized_input({64}, from, q);
    const uint32_t out = b.quantized_output({64}, to, q);
    b.unary(NodeType::kCopy, in, out);
    write_seed(dir, "seed-copy-mixed-" + std::to_string(k++), b);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto graph = et::xnn::parse_graph({data, size}, zeros);
  if (!graph.ok()) return 0;
  et::xnn::CompileOptions options;
  options.max_activation_bytes = kLimit;
  auto compiled = et::xnn::CompiledGraph::create(std::move(graph).value(), options);
  if (!compiled.ok()) return 0;
  (void)et::xnn::testing::run_once(**compiled);
  return 0;
}
