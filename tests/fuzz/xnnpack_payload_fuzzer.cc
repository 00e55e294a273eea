// libFuzzer target: arbitrary bytes as an XNNPACK delegate payload, driven through
// parsing, planning, compiling with XNNPACK and one run. Build with scripts/fuzz.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/xnnpack/compiled_graph.h"
#include "backends/xnnpack/testing/run_once.h"

namespace {

constexpr size_t kLimit = size_t{64} << 20;

// Every named constant resolves to zeros, so graphs seeded from real programs get past
// constant resolution and reach planning and XNNPACK.
et::Result<std::span<const uint8_t>> zeros(std::string_view) {
  static const std::vector<uint8_t> bytes(size_t{8} << 20, 0);
  return std::span<const uint8_t>(bytes);
}

}  // namespace

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
