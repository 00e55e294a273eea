// The XNNPACK delegate's graph, parsed and verified from its payload (FORMAT.md §7).
//
// parse_graph() checks everything that can be checked without running: the header's
// offsets, the flatbuffer, every value id a node or the graph names, external ids,
// constant sizes and where their bytes are. What it returns can be planned and run
// without re-checking ids or bounds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/math/int4_gemm.h"
#include "kernels/math/packed_sgemm.h"
#include "runtime/core/status.h"

namespace et::xnn {

// Node type codes of the payload (its union order).
enum class NodeType : uint8_t {
  kAdd = 1,
  kFullyConnected,
  kSoftmax,
  kSigmoid,
  kStaticTranspose,
  kClamp,
  kConv2d,
  kDiv,
  kStaticResizeBilinear2D,
  kStaticConstantPad,
  kAvgPooling2d,
  kMinimum,
  kDepthwiseConv2d,
  kMaxPooling2d,
  kMultiply,
  kSubtract,
  kFloor,
  kConvert,
  kGlobalAvgPooling2d,
  kStaticReshape,
  kArgMaxPooling2d,
  kSquareRoot,
  kCeiling,
  kHardswish,
  kLeakyReLU,
  kMaximum,
  kNegate,
  kSquare,
  kElu,
  kAbs,
  kPReLU,
  kConcatenate2,
  kConcatenate3,
  kConcatenate4,
  kStaticSlice,
  kScaledDotProductAttention,
  kBatchMatrixMultiply,
  kConcatenate5,
  kConvTranspose2d,
  kReciprocalSquareRoot,
  kLog,
  kGelu,
  kTanh,
  kExp,
  kSin,
  kCopy,
  kCos,
};
constexpr int kLastNodeType = static_cast<int>(NodeType::kCos);

// "Conv2d", "StaticTranspose", ... (the payload's names without their prefix).
std::string_view node_type_name(NodeType type);

// Element types of the payload (XNNPACK's datatypes).
enum class DataType : uint8_t {
  kInvalid = 0,
  kFp32 = 1,
  kFp16 = 2,
  kQInt8 = 3,
  kQUInt8 = 4,
  kQInt32 = 5,
  kQcInt8 = 6,
  kQcInt32 = 7,
  kQcInt4 = 8,
  kQdInt8 = 9,
  kQbInt4 = 10,
  kQpInt8 = 11,
  kInt32 = 12,
  kPFp32 = 13,
  kBf16 = 14,
};
std::string_view data_type_name(DataType type);
// Bytes per element; 0 for types whose layout this backend does not know.
size_t data_type_size(DataType type);

constexpr uint32_t kNoValue = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kExternalInput = 0x1;
constexpr uint32_t kExternalOutput = 0x2;
constexpr size_t kMaxDims = 6;  // what XNNPACK accepts

// The quantization of one row of a dynamically quantized (qdint8) value: XNNPACK's
// xnn_qd8_quantization_params (real = (q - zero_point) * scale).
struct QdParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

struct GraphValue {
  bool defined = false;  // ids the payload skips stay undefined; nothing may use them
  DataType dtype = DataType::kInvalid;
  std::vector<size_t> dims;
  size_t numel = 1;
  const void* data = nullptr;       // constant bytes (numel elements), else nullptr
  uint32_t external_id = kNoValue;  // position among the DelegateCall's arguments
  uint32_t flags = 0;               // kExternalInput | kExternalOutput
  // Quantization (quantized types only).
  float scale = 1.0f;
  int32_t zero_point = 0;
  std::vector<float> channel_scales;  // per-channel types
  uint32_t channel_dim = 0;
  // qdint8 (per-token dynamic quantization): the trailing dims one row spans; the
  // leading dims count the rows, each quantized with its own QdParams at run time.
  uint32_t nonbatch_dims = 0;
  // 4-bit weights (qbint4 blockwise, qcint4 per channel: a [N, K] constant): values per
  // scale along K (K for qcint4), channel_scales holding N * K / group_size scales; and
  // the weights packed once for kernels/math/int4_gemm.h, shared by every copy of the graph.
  uint32_t group_size = 0;
  std::shared_ptr<const kernels::Int4Weights> int4;
  // A float32 FullyConnected filter packed once for kernels/math/packed_sgemm.h (set by
  // pack_fully_connected_filters, shared by every copy of the graph); `data` stays the
  // unpacked constant.
  std::shared_ptr<const kernels::PackedWeights> packed;

  bool is_int4() const { return dtype == DataType::kQbInt4 || dtype == DataType::kQcInt4; }

  // Rows of a qdint8 value (1 for other types).
  size_t qd_rows() const {
    if (dtype != DataType::kQdInt8 || nonbatch_dims == 0 || nonbatch_dims > dims.size()) return 1;
    size_t rows = 1;
    for (size_t i = 0; i + nonbatch_dims < dims.size(); ++i) rows *= dims[i];
    return rows;
  }
  // Where a qdint8 buffer keeps its rows' QdParams: after the int8 data, aligned.
  size_t qd_params_offset() const {
    return (numel + alignof(QdParams) - 1) / alignof(QdParams) * alignof(QdParams);
  }
  // Bytes of the value's buffer; a qdint8 buffer carries its rows' QdParams too.
  size_t nbytes() const {
    if (dtype == DataType::kQdInt8) return qd_params_offset() + qd_rows() * sizeof(QdParams);
    if (is_int4()) return (numel + 1) / 2;  // two values a byte
    return numel * data_type_size(dtype);
  }
};

struct GraphNode {
  NodeType type = NodeType::kAdd;
  uint32_t debug_handle = 0;
  float output_min = -std::numeric_limits<float>::infinity();
  float output_max = std::numeric_limits<float>::infinity();
  // Value ids in the payload's order; an absent optional input (a bias) is kNoValue.
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  uint32_t flags = 0;
  // Integer parameters in the payload's order: conv (padding t/r/b/l, kernel h/w,
  // stride h/w, dilation h/w, group in/out channels, groups, adjustment h/w), pooling
  // (padding t/r/b/l, pool h/w, stride h/w, dilation h/w), resize (height, width),
  // concatenate (axis).
  std::array<uint32_t, 15> params{};
  // perm (transpose), new shape (reshape), offsets (slice), pre paddings (pad).
  std::vector<size_t> list;
  // sizes (slice), post paddings (pad).
  std::vector<size_t> list2;
  float scalar = 0;  // ELU alpha, LeakyReLU slope, pad value

  bool has_output_range() const {
    return output_min != -std::numeric_limits<float>::infinity() ||
           output_max != std::numeric_limits<float>::infinity();
  }
};

struct Graph {
  std::vector<GraphValue> values;  // by value id
  std::vector<GraphNode> nodes;    // in execution order
  // Value ids of the DelegateCall's arguments, by external id (inputs first, then
  // outputs), and how many are inputs.
  std::vector<uint32_t> externals;
  size_t num_inputs = 0;
  // Constant bytes that had to be copied (misaligned in the program); `data`
  // pointers above may point here.
  std::vector<std::unique_ptr<float[]>> owned_constants;
  // An aligned copy of a misaligned flatbuffer (inline constants may point into it).
  std::vector<uint64_t> owned_flatbuffer;
};

// Whether `pred(value)` holds for every value `node` reads or writes (absent optional
// inputs are skipped).
template <typename Pred>
bool all_node_values(const Graph& graph, const GraphNode& node, Pred pred) {
  for (const auto* ids : {&node.inputs, &node.outputs}) {
    for (uint32_t id : *ids) {
      if (id != kNoValue && !pred(graph.values[id])) return false;
    }
  }
  return true;
}

// Looks up the program's named data (constants shared by key).
using NamedDataLookup = std::function<Result<std::span<const uint8_t>>(std::string_view key)>;

// Parses and verifies `payload` (with or without the XH00 header). Constant `data`
// pointers point into `payload`, into the named data, or into the Graph itself, so
// both must outlive the Graph.
// Errors: InvalidProgram naming the first problem (truncated header, offsets out of
// range, an unknown or undefined value id, a constant of the wrong size, ...).
// NotSupported for valid payloads using what this backend does not know (a data type
// of unknown layout, more than kMaxDims dimensions).
Result<Graph> parse_graph(std::span<const uint8_t> payload, const NamedDataLookup& named_data);

// Bytes of weights packed for the project's own kernels (GraphValue::int4 and
// GraphValue::packed) alive in this process; each packing exists once per program,
// shared by every copy of its graph.
uint64_t kernel_weight_bytes();
void count_kernel_weight_bytes(int64_t delta);

// `weights` (of `bytes` bytes) in a shared pointer that counts them in
// kernel_weight_bytes() while it lives.
template <class T>
std::shared_ptr<const T> share_counted(T weights, size_t bytes) {
  auto owned = std::make_unique<const T>(std::move(weights));
  count_kernel_weight_bytes(static_cast<int64_t>(bytes));
  // Should the shared pointer's own allocation throw, it runs the deleter: uncounted.
  return std::shared_ptr<const T>(owned.release(), [bytes](const T* p) {
    count_kernel_weight_bytes(-static_cast<int64_t>(bytes));
    delete p;
  });
}

// XNNPACK's kernels may read up to XNN_EXTRA_BYTES (16) past the end of an operand
// they did not pack (AVX2 and NEON kernels do; AVX-512 ones use masked loads). True
// when those bytes share a page with the operand's last byte, so the read cannot
// fault. CompiledGraph::run() copies an input for which this is false (e.g. one ending
// a client's shared-memory mapping); parsing copies such a constant (e.g. one ending a
// mapped program file).
inline constexpr size_t kXnnExtraBytes = 16;
bool over_read_is_safe(const void* data, size_t nbytes);

}  // namespace et::xnn
