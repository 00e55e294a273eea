// Float math XNNPACK 2022 lacks: tanh, exp, log, sin, cos, gelu, 1/sqrt.
#include <cmath>

#include "backends/xnnpack/kernel_nodes.h"
#include "kernels/math/vector_math.h"
#include "runtime/core/thread_pool.h"

namespace et::xnn {
namespace {

template <typename F>
void map(const float* in, float* out, size_t n, F f) {
  ThreadPool::global().parallel_for(n, 16384, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = f(in[i]);
  });
}

// An array function of kernels/math/vector_math.h, split across threads.
void map_array(const float* in, float* out, size_t n, void (*f)(const float*, float*, int64_t)) {
  ThreadPool::global().parallel_for(n, 16384, [&](size_t begin, size_t end) {
    f(in + begin, out + begin, static_cast<int64_t>(end - begin));
  });
}

}  // namespace

void run_math_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  const auto* in = static_cast<const float*>(ptrs[node.inputs[0]]);
  auto* out = static_cast<float*>(ptrs[node.outputs[0]]);
  const size_t n = graph.values[node.outputs[0]].numel;
  switch (node.type) {
    case NodeType::kTanh:
      return map_array(in, out, n, kernels::tanh_array);
    case NodeType::kExp:
      return map_array(in, out, n, kernels::exp_array);
    case NodeType::kLog:
      return map(in, out, n, [](float x) { return std::log(x); });
    case NodeType::kSin:
      return map(in, out, n, [](float x) { return std::sin(x); });
    case NodeType::kCos:
      return map(in, out, n, [](float x) { return std::cos(x); });
    case NodeType::kGelu:
      return map_array(in, out, n, kernels::gelu_array);
    case NodeType::kReciprocalSquareRoot:
      return map(in, out, n, [](float x) { return 1.0f / std::sqrt(x); });
    default:
      return;  // kernel_runs() admits no other type here
  }
}

}  // namespace et::xnn
