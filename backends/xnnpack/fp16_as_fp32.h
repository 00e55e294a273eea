// Float16 graphs in float32. Debian's 2022 XNNPACK refuses float16 operators
// (FullyConnected, convolutions, ...), so a delegate payload exported from a float16
// model runs in float32 here: every float16 value becomes float32 (constants converted
// once, owned by the graph) and a Convert between the two becomes a copy. The delegate
// converts float16 inputs on the way in and rounds float32 results back to float16 on
// the way out (xnnpack_backend.cc), as PyTorch's CPU kernels compute half-precision
// ops in float and round the result.
#pragma once

#include <cstddef>

#include "backends/xnnpack/graph.h"

namespace et::xnn {

// Promotes every float16 value of `graph` to float32; returns how many it promoted.
size_t promote_fp16_to_fp32(Graph& graph);

}  // namespace et::xnn
