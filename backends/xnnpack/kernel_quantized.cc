// Quantized nodes the installed 2022 XNNPACK lacks, in the forms ExecuTorch's
// XNNPACKQuantizer produces:
//
//   Convert         fp32 -> qdint8 (dynamic quantization, `is_dynamic=True`): each row
//                   (the value's trailing `nonbatch_dims` dims) gets its own scale and
//                   zero point from its min and max, then is quantized with them.
//   FullyConnected  qdint8 input x qcint8 filter (symmetric, one scale per output
//                   channel) + fp32 bias -> fp32 output (dynamic linear layers).
//   FullyConnected  qint8 input x qcint8 filter + qcint32 bias -> qint8 output (static
//                   linear layers with per-channel weights: the 2022 XNNPACK has
//                   per-channel filters for convolutions only).
//
// Static: XNNPACK's qs8-qc8w GEMM with fp32 requantization. acc = bias[n] +
// sum_k (x[k] - x_zero_point) * w[n][k] in integers; y = float(acc) * (x_scale *
// w_scale[n] / y_scale), clamped to the output range (the node's float range quantized
// like XNNPACK's xnn_qs8_quantize, within [-128, 127]) less y_zero_point, rounded to
// nearest even, plus y_zero_point.
//
// Dynamic:
// The arithmetic is XNNPACK's (src/xnnpack/quantization.h, the f32-qd8 convert and the
// qd8-f32-qc8w GEMM): a row's range always includes 0; inv_scale = 255 / (max - min)
// (1 when max == min); the zero point is the one of -128 - min*inv_scale and
// 127 - max*inv_scale with the smaller error, clamped to [-128, 127] and rounded to
// nearest; q = clamp(round_half_even(x * inv_scale) + zero_point, -128, 127); the row's
// dequantization scale is 1 / inv_scale. The product accumulates
// sum_k (q[k] - zero_point) * w[n][k] exactly in integers, then
// y = acc * scale * filter_scale[n] + bias[n], clamped to the node's output range.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/xnnpack/kernel_nodes.h"
#include "kernels/util/min_max.h"
#include "kernels/util/round_small.h"
#include "runtime/core/thread_pool.h"

namespace et::xnn {
namespace {

constexpr uint32_t kTransposeWeights = 0x1;  // XNN_FLAG_TRANSPOSE_WEIGHTS: filter [K, N]
// The deepest product whose int32 partial sums cannot overflow: an int8 x int8 product
// is at most 2^14 in magnitude, so 2^16 of them stay below 2^31.
constexpr size_t kMaxQd8Depth = size_t{1} << 16;

bool is(const Graph& graph, uint32_t id, DataType type) {
  return id != kNoValue && graph.values[id].dtype == type;
}

QdParams* row_params(const GraphValue& v, void* buffer) {
  return reinterpret_cast<QdParams*>(static_cast<uint8_t*>(buffer) + v.qd_params_offset());
}

// XNNPACK's xnn_qd8_asymmetric_quantization_params; returns the quantizing multiplier
// (inv_scale) and fills the row's dequantization parameters.
float row_quantization(float lo, float hi, QdParams& params) {
  constexpr float qmin = -128.0f, qmax = 127.0f;
  const float rmin = std::min(0.0f, lo), rmax = std::max(0.0f, hi);
  const float inv_scale = rmin == rmax ? 1.0f : (qmax - qmin) / (rmax - rmin);
  const float descaled_min = rmin * inv_scale, descaled_max = rmax * inv_scale;
  float zero_point =
      (qmin + descaled_min) + (qmax + descaled_max) > 0 ? qmin - descaled_min : qmax - descaled_max;
  if (std::isnan(zero_point)) zero_point = qmin;  // a row holding infinities
  zero_point = std::clamp(zero_point, qmin, qmax);
  params.zero_point = static_cast<int32_t>(std::nearbyint(zero_point));
  params.scale = 1.0f / inv_scale;
  return inv_scale;
}

// q[i] = round(clamp(x[i] * inv_scale, below, above)) + zp, NaN as below: clamped
// first, so the float-to-int conversion never sees a value out of range, and rounding
// a clamped value equals clamping a rounded one (the bounds are integers).
void quantize_row(const float* __restrict x, size_t n, float inv_scale, float below, float above,
                  int32_t zp, int8_t* __restrict q) {
  for (size_t i = 0; i < n; ++i) {
    float v = x[i] * inv_scale;
    v = v >= below ? v : below;  // NaN too
    v = v > above ? above : v;
    q[i] = static_cast<int8_t>(static_cast<int32_t>(kernels::round_small(v)) + zp);
  }
}

void convert_to_qd8(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  const GraphValue& y = graph.values[node.outputs[0]];
  const auto* x = static_cast<const float*>(ptrs[node.inputs[0]]);
  auto* q = static_cast<int8_t*>(ptrs[node.outputs[0]]);
  QdParams* params = row_params(y, ptrs[node.outputs[0]]);
  const size_t rows = y.qd_rows();
  const size_t width = y.numel / rows;
  auto quantize = [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const float* row = x + r * width;
      float lo = 0.0f, hi = 0.0f;  // the range includes 0 anyway; NaNs are skipped
      kernels::min_max(row, width, lo, hi);
      const float inv_scale = row_quantization(lo, hi, params[r]);
      const int32_t zp = params[r].zero_point;
      const float below = static_cast<float>(-128 - zp), above = static_cast<float>(127 - zp);
      quantize_row(row, width, inv_scale, below, above, zp, q + r * width);
    }
  };
  // A prefill's rows are shared by the process's threads; a decode step's one row is
  // not worth waking them for.
  constexpr size_t kParallelValues = size_t{1} << 14;
  if (rows < 4 || rows * width < kParallelValues) {
    quantize(0, rows);
  } else {
    ThreadPool::global().parallel_for(rows, 2, quantize);
  }
}

// acc[j] = sum_k x[k] * w[j][k] (w [N, K]; [K, N] when transposed), exact in int32:
// callers bound k by kMaxQd8Depth.
void dot_rows(const int8_t* x, const int8_t* w, size_t k, size_t n, bool transposed, int32_t* acc) {
  if (transposed) {
    std::fill(acc, acc + n, 0);
    for (size_t i = 0; i < k; ++i) {
      const int32_t a = x[i];
      const int8_t* wi = w + i * n;
      for (size_t j = 0; j < n; ++j) acc[j] += a * wi[j];
    }
    return;
  }
  for (size_t j = 0; j < n; ++j) {
    const int8_t* wj = w + j * k;
    int32_t sum = 0;
    for (size_t i = 0; i < k; ++i) sum += static_cast<int32_t>(x[i]) * wj[i];
    acc[j] = sum;
  }
}

// The operands of a quantized FullyConnected, as both forms below read them.
struct QuantizedFc {
  QuantizedFc(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs)
      : xv(graph.values[node.inputs[0]]),
        wv(graph.values[node.inputs[1]]),
        yv(graph.values[node.outputs[0]]),
        transposed(node.flags & kTransposeWeights),
        k(xv.dims.back()),
        n(yv.dims.back()),
        rows(xv.numel / k),
        x(static_cast<const int8_t*>(ptrs[node.inputs[0]])),
        w(static_cast<const int8_t*>(ptrs[node.inputs[1]])) {}

  // sum over k of output channel j's weights: the input's zero point times it comes off
  // each dot product once.
  int64_t weight_sum(size_t j) const {
    int64_t sum = 0;
    for (size_t i = 0; i < k; ++i) sum += transposed ? w[i * n + j] : w[j * k + i];
    return sum;
  }

  const GraphValue& xv;
  const GraphValue& wv;
  const GraphValue& yv;
  const bool transposed;
  const size_t k, n, rows;
  const int8_t* x;
  const int8_t* w;
};

void fully_connected_qd8(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  const QuantizedFc fc(graph, node, ptrs);
  const size_t k = fc.k, n = fc.n;
  const QdParams* params = row_params(fc.xv, ptrs[node.inputs[0]]);
  const float* bias =
      node.inputs[2] == kNoValue ? nullptr : static_cast<const float*>(ptrs[node.inputs[2]]);
  auto* y = static_cast<float*>(ptrs[node.outputs[0]]);
  // Per-thread buffers that keep their capacity: an execute allocates nothing once warm.
  thread_local std::vector<int64_t> wsum;
  thread_local std::vector<int32_t> acc;
  wsum.resize(n);
  acc.resize(n);
  for (size_t j = 0; j < n; ++j) wsum[j] = fc.weight_sum(j);
  for (size_t r = 0; r < fc.rows; ++r) {
    dot_rows(fc.x + r * k, fc.w, k, n, fc.transposed, acc.data());
    const float scale = params[r].scale;
    const int64_t zp = params[r].zero_point;
    for (size_t j = 0; j < n; ++j) {
      const auto total = static_cast<float>(acc[j] - zp * wsum[j]);
      const float b = bias ? bias[j] : 0.0f;
      y[r * n + j] = std::fma(total * scale, fc.wv.channel_scales[j], b);
    }
  }
}

// qdint8 input x 4-bit weights (blockwise qbint4 or per-channel qcint4) -> fp32:
// kernels/math/int4_gemm.h with the weights packed when the graph was parsed.
void fully_connected_qd8_int4(const Graph& graph, const GraphNode& node,
                              std::span<void* const> ptrs) {
  const GraphValue& xv = graph.values[node.inputs[0]];
  const kernels::Int4Weights& w = *graph.values[node.inputs[1]].int4;
  const size_t rows = xv.numel / w.k;
  const QdParams* params = row_params(xv, ptrs[node.inputs[0]]);
  thread_local std::vector<kernels::RowQuantization> quant;  // keeps its capacity
  quant.resize(rows);
  for (size_t r = 0; r < rows; ++r) quant[r] = {params[r].scale, params[r].zero_point};
  const float* bias =
      node.inputs[2] == kNoValue ? nullptr : static_cast<const float*>(ptrs[node.inputs[2]]);
  auto* y = static_cast<float*>(ptrs[node.outputs[0]]);
  kernels::int4_gemm(rows, static_cast<const int8_t*>(ptrs[node.inputs[0]]), quant, w, bias, y);
  clamp_output(node, y, rows * w.n);
}

// The 4-bit filter of a FullyConnected we run: a packed [N, K] constant, not transposed.
bool int4_filter(const Graph& graph, const GraphNode& node) {
  const GraphValue& w = graph.values[node.inputs[1]];
  return w.is_int4() && w.int4 && !(node.flags & kTransposeWeights) &&
         graph.values[node.inputs[0]].dims.back() == w.int4->k &&
         graph.values[node.outputs[0]].dims.back() == w.int4->n;
}

// XNNPACK's xnn_qs8_quantize: a float bound of the output range in the output's steps.
int32_t quantize_bound(float x, float scale, int32_t zero_point) {
  float v = x / scale + static_cast<float>(zero_point);
  if (!(v >= -128.0f)) v = -128.0f;  // NaN too
  v = std::min(v, 127.0f);
  return static_cast<int32_t>(std::nearbyint(v));
}

void fully_connected_qs8(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  const QuantizedFc fc(graph, node, ptrs);
  const size_t k = fc.k, n = fc.n;
  const GraphValue& yv = fc.yv;
  const int32_t* bias =
      node.inputs[2] == kNoValue ? nullptr : static_cast<const int32_t*>(ptrs[node.inputs[2]]);
  auto* y = static_cast<int8_t*>(ptrs[node.outputs[0]]);
  const int32_t y_zp = yv.zero_point;
  const float lo = static_cast<float>(quantize_bound(node.output_min, yv.scale, y_zp) - y_zp);
  const float hi = static_cast<float>(quantize_bound(node.output_max, yv.scale, y_zp) - y_zp);
  // Per output channel: the requantization scale and bias - x_zero_point * sum_k w.
  thread_local std::vector<float> requant;  // these keep their capacity across calls
  thread_local std::vector<int64_t> offset;
  thread_local std::vector<int32_t> acc;
  requant.resize(n);
  offset.resize(n);
  acc.resize(n);
  for (size_t j = 0; j < n; ++j) {
    requant[j] = fc.xv.scale * fc.wv.channel_scales[j] / yv.scale;
    offset[j] = (bias ? bias[j] : 0) - int64_t{fc.xv.zero_point} * fc.weight_sum(j);
  }
  for (size_t r = 0; r < fc.rows; ++r) {
    dot_rows(fc.x + r * k, fc.w, k, n, fc.transposed, acc.data());
    for (size_t j = 0; j < n; ++j) {
      float v = static_cast<float>(acc[j] + offset[j]) * requant[j];
      if (!(v >= lo)) v = lo;  // NaN too
      v = std::min(v, hi);
      y[r * n + j] = static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) + y_zp);
    }
  }
}

// The filter of a quantized FullyConnected we run: a constant qcint8 [N, K] (or
// [K, N] transposed) with one scale per output channel and zero point 0.
bool qc8_filter(const Graph& graph, const GraphNode& node) {
  const GraphValue& w = graph.values[node.inputs[1]];
  const uint32_t out_dim = (node.flags & kTransposeWeights) ? 1 : 0;
  return w.dtype == DataType::kQcInt8 && w.data && w.dims.size() == 2 && w.channel_dim == out_dim &&
         w.channel_scales.size() == w.dims[out_dim] && w.zero_point == 0 &&
         graph.values[node.inputs[0]].dims.back() <= kMaxQd8Depth;
}

// A per-tensor int8 quantization XNNPACK would accept: one positive finite scale and a
// zero point inside the int8 range (so requantized values stay inside int32).
bool int8_quantization(const GraphValue& v) {
  return v.channel_scales.empty() && std::isfinite(v.scale) && v.scale > 0 &&
         v.zero_point >= -128 && v.zero_point <= 127;
}

}  // namespace

bool quantized_runs(const Graph& graph, const GraphNode& node) {
  switch (node.type) {
    case NodeType::kConvert: {
      // fp32 -> qdint8 per token. (Convert between static types is XNNPACK's.)
      const GraphValue& y = graph.values[node.outputs[0]];
      return is(graph, node.inputs[0], DataType::kFp32) && y.dtype == DataType::kQdInt8 &&
             y.nonbatch_dims >= 1 && y.nonbatch_dims <= y.dims.size() && !node.has_output_range();
    }
    case NodeType::kFullyConnected: {
      const GraphValue& x = graph.values[node.inputs[0]];
      const uint32_t bias = node.inputs[2];
      if (int4_filter(graph, node)) {
        return x.dtype == DataType::kQdInt8 && x.nonbatch_dims == 1 &&
               (bias == kNoValue || is(graph, bias, DataType::kFp32)) &&
               is(graph, node.outputs[0], DataType::kFp32);
      }
      if (!qc8_filter(graph, node)) return false;
      if (x.dtype == DataType::kQdInt8) {
        // The input's rows must be the product's rows: one set of parameters per row.
        return x.nonbatch_dims == 1 && (bias == kNoValue || is(graph, bias, DataType::kFp32)) &&
               is(graph, node.outputs[0], DataType::kFp32);
      }
      // Static: int32 bias values (their scale is x_scale * w_scale, as XNNPACK assumes).
      const GraphValue& y = graph.values[node.outputs[0]];
      return x.dtype == DataType::kQInt8 && y.dtype == DataType::kQInt8 && int8_quantization(x) &&
             int8_quantization(y) &&
             (bias == kNoValue || is(graph, bias, DataType::kQcInt32) ||
              is(graph, bias, DataType::kQInt32));
    }
    default:
      return false;
  }
}

void run_quantized_node(const Graph& graph, const GraphNode& node, std::span<void* const> ptrs) {
  if (node.type == NodeType::kConvert) {
    convert_to_qd8(graph, node, ptrs);
  } else if (graph.values[node.inputs[1]].is_int4()) {
    fully_connected_qd8_int4(graph, node, ptrs);
  } else if (graph.values[node.inputs[0]].dtype == DataType::kQdInt8) {
    fully_connected_qd8(graph, node, ptrs);
  } else {
    fully_connected_qs8(graph, node, ptrs);
  }
}

}  // namespace et::xnn
