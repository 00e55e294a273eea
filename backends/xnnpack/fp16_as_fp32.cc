#include "backends/xnnpack/fp16_as_fp32.h"

#include <cstring>

#include "runtime/core/half.h"

namespace et::xnn {

size_t promote_fp16_to_fp32(Graph& graph) {
  size_t promoted = 0;
  for (GraphValue& v : graph.values) {
    if (!v.defined || v.dtype != DataType::kFp16) continue;
    if (v.data != nullptr) {
      // XNNPACK may read kXnnExtraBytes past a constant: the copy has room for them.
      const size_t extra = (kXnnExtraBytes + sizeof(float) - 1) / sizeof(float);
      auto floats = std::make_unique<float[]>(v.numel + extra);
      const auto* halves = static_cast<const uint8_t*>(v.data);
      for (size_t i = 0; i < v.numel; ++i) {
        uint16_t bits;
        std::memcpy(&bits, halves + 2 * i, sizeof bits);
        floats[i] = Half::from_bits(bits);
      }
      v.data = floats.get();
      graph.owned_constants.push_back(std::move(floats));
    }
    v.dtype = DataType::kFp32;
    ++promoted;
  }
  if (promoted == 0) return 0;
  for (GraphNode& node : graph.nodes) {
    if (node.type != NodeType::kConvert) continue;
    const GraphValue& in = graph.values[node.inputs[0]];
    const GraphValue& out = graph.values[node.outputs[0]];
    if (in.dtype == DataType::kFp32 && out.dtype == DataType::kFp32) node.type = NodeType::kCopy;
  }
  return promoted;
}

}  // namespace et::xnn
