#include "backends/xnnpack/graph.h"

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "backends/xnnpack/schema/xnn_graph_generated.h"

namespace et::xnn {
namespace {

constexpr size_t kHeaderSize = 30;
constexpr uint64_t kInNamedData = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kMaxValues = 1u << 22;
constexpr uint32_t kIdSlack = 1024;  // ids may skip numbers, but not millions of them
constexpr size_t kMaxTensorBytes = size_t{1} << 40;

uint16_t read_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only (x86-64, aarch64)
}
uint64_t read_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

Status bad(std::string message) { return invalid_program("XNNPACK payload: " + message); }

struct Sections {
  std::span<const uint8_t> flatbuffer;
  std::span<const uint8_t> constants;  // empty without a header
};

Result<Sections> split_payload(std::span<const uint8_t> payload) {
  if (payload.size() < 8) return bad(fmt::format("{} bytes is too short", payload.size()));
  if (std::memcmp(payload.data() + 4, "XH00", 4) != 0) return Sections{payload, {}};
  if (payload.size() < kHeaderSize) {
    return bad(fmt::format("header truncated ({} of {} bytes)", payload.size(), kHeaderSize));
  }
  const uint8_t* p = payload.data();
  const uint16_t header_size = read_u16(p + 8);
  const uint64_t fb_offset = read_u32(p + 10), fb_size = read_u32(p + 14);
  const uint64_t const_offset = read_u32(p + 18), const_size = read_u64(p + 22);
  if (header_size < kHeaderSize || header_size > payload.size()) {
    return bad(fmt::format("header length {} is not in [{}, {}]", header_size, kHeaderSize,
                           payload.size()));
  }
  if (fb_offset < header_size || fb_offset + fb_size > payload.size()) {
    return bad(fmt::format("flatbuffer [{}, +{}) lies outside the {}-byte payload", fb_offset,
                           fb_size, payload.size()));
  }
  if (const_offset > payload.size() || const_size > payload.size() - const_offset) {
    return bad(fmt::format("constant data [{}, +{}) lies outside the {}-byte payload", const_offset,
                           const_size, payload.size()));
  }
  return Sections{payload.subspan(fb_offset, fb_size), payload.subspan(const_offset, const_size)};
}

template <typename T>
std::vector<size_t> to_sizes(const flatbuffers::Vector<T>* v) {
  std::vector<size_t> out;
  if (v) out.assign(v->begin(), v->end());
  return out;
}

class GraphParser {
 public:
  GraphParser(const fb::Graph& root, Sections sections, const NamedDataLookup& named_data)
      : root_(root), sections_(sections), named_data_(named_data) {}

  Result<Graph> parse() {
    ET_RETURN_IF_ERROR(parse_values());
    ET_RETURN_IF_ERROR(parse_externals());
    if (root_.nodes()) {
      for (uint32_t i = 0; i < root_.nodes()->size(); ++i) {
        if (Status s_ = parse_node(*root_.nodes()->Get(i)); !s_.ok())
          return s_.with_context(fmt::format("node {}", i));
      }
    }
    return std::move(graph_);
  }

 private:
  Status parse_values() {
    if (!root_.values()) return Status();
    for (uint32_t i = 0; i < root_.values()->size(); ++i) {
      const fb::Value* v = root_.values()->Get(i);
      const fb::TensorValue* t = nullptr;
      const fb::QuantizedTensorValue* q = nullptr;
      if (v->kind_type() == fb::ValueKind::TensorValue) {
        t = v->kind_as_TensorValue();
      } else if (v->kind_type() == fb::ValueKind::QuantizedTensorValue) {
        q = v->kind_as_QuantizedTensorValue();  // null when the type has no table
        t = q ? q->tensor() : nullptr;
      }
      if (!t) return bad(fmt::format("value {} has no tensor", i));
      ET_RETURN_IF_ERROR(parse_value(*t, q));
    }
    return Status();
  }

  Status parse_value(const fb::TensorValue& t, const fb::QuantizedTensorValue* q) {
    const uint32_t id = t.id_out();
    // The value table is sized by the largest id: bounded by what the payload declares
    // (plus slack for sparse numbering), so a few bytes cannot claim gigabytes.
    const uint32_t declared = root_.values()->size();
    if (id >= kMaxValues || id >= declared + kIdSlack) {
      return bad(fmt::format("value id {} is too large for a graph of {} values", id, declared));
    }
    if (id >= graph_.values.size()) graph_.values.resize(id + 1);
    GraphValue& v = graph_.values[id];
    if (v.defined) return bad(fmt::format("value {} is defined twice", id));
    v.defined = true;
    v.dtype = static_cast<DataType>(t.datatype());
    if (static_cast<int>(t.datatype()) > static_cast<int>(DataType::kBf16) ||
        v.dtype == DataType::kInvalid) {
      return bad(
          fmt::format("value {} has unknown data type {}", id, static_cast<int>(t.datatype())));
    }
    if (data_type_size(v.dtype) == 0 &&
        !(v.is_int4() && q != nullptr && t.constant_buffer_idx() != 0 && t.flags() == 0)) {
      // 4-bit values are weights: constants our int4 kernels unpack.
      return not_supported(
          fmt::format("XNNPACK payload: value {} has data type {}, which this "
                      "backend cannot run",
                      id, data_type_name(v.dtype)));
    }
    v.dims = to_sizes(t.dims());
    if (v.dims.size() != t.num_dims()) {
      return bad(
          fmt::format("value {} declares {} dims but lists {}", id, t.num_dims(), v.dims.size()));
    }
    if (v.dims.size() > kMaxDims) {
      return not_supported(fmt::format("XNNPACK payload: value {} has {} dims (at most {})", id,
                                       v.dims.size(), kMaxDims));
    }
    for (size_t d : v.dims) {
      if (d == 0 || v.numel > kMaxTensorBytes / d) {
        return bad(fmt::format("value {} has an empty or oversized dimension", id));
      }
      v.numel *= d;
    }
    if (v.nbytes() > kMaxTensorBytes) return bad(fmt::format("value {} is too large", id));
    v.flags = t.flags();
    v.external_id = t.external_id();
    if (v.flags & ~(kExternalInput | kExternalOutput)) {
      return bad(fmt::format("value {} has unknown flags {:#x}", id, v.flags));
    }
    if ((v.flags != 0) != (v.external_id != kNoValue)) {
      return bad(fmt::format("value {}: external id {} does not agree with flags {:#x}", id,
                             v.external_id, v.flags));
    }
    if (Status s_ = q ? parse_quantization(v, *q) : Status(); !s_.ok()) {
      return s_.with_context(fmt::format("value {}", id));
    }
    if (t.constant_buffer_idx() != 0) {
      if (v.flags) return bad(fmt::format("value {} is both external and constant", id));
      if (Status s_ = resolve_constant(v, t.constant_buffer_idx()); !s_.ok())
        return s_.with_context(fmt::format("value {}", id));
    }
    return Status();
  }

  Status parse_quantization(GraphValue& v, const fb::QuantizedTensorValue& q) {
    if (const fb::PerTokenDynamicQuant* pt = q.quant_as_PerTokenDynamicQuant()) {
      // Quantized per row at run time (Convert fp32 -> qdint8); the row parameters
      // travel in the value's buffer (GraphValue::nbytes), so the value can be neither
      // a constant nor exchanged with the caller.
      if (v.dtype != DataType::kQdInt8) {
        return not_supported(
            fmt::format("XNNPACK payload: per-token dynamic quantization of a {} "
                        "value (only qdint8 has it)",
                        data_type_name(v.dtype)));
      }
      if (pt->num_nonbatch_dims() < 1 ||
          static_cast<size_t>(pt->num_nonbatch_dims()) > v.dims.size()) {
        return bad(fmt::format("per-token quantization over {} trailing dims of a {}-d value",
                               pt->num_nonbatch_dims(), v.dims.size()));
      }
      if (v.flags != 0) {
        return not_supported(
            "XNNPACK payload: a dynamically quantized (qdint8) graph input or output");
      }
      v.nonbatch_dims = static_cast<uint32_t>(pt->num_nonbatch_dims());
      return Status();
    }
    if (v.dtype == DataType::kQdInt8) {
      return not_supported("XNNPACK payload: a qdint8 value without per-token quantization");
    }
    if (const fb::PerTensorQuant* pt = q.quant_as_PerTensorQuant()) {
      v.scale = pt->scale();
      v.zero_point = pt->zero_point();
      return Status();
    }
    if (const fb::PerChannelQuant* pc = q.quant_as_PerChannelQuant()) {
      if (pc->channel_dim() < 0 || static_cast<size_t>(pc->channel_dim()) >= v.dims.size()) {
        return bad("per-channel scales name a dimension the value does not have");
      }
      const size_t channels = v.dims[static_cast<size_t>(pc->channel_dim())];
      v.channel_dim = static_cast<uint32_t>(pc->channel_dim());
      if (pc->scale() && pc->scale()->size() > 0) {
        if (pc->scale()->size() != channels) {
          return bad("per-channel scales do not match the channel dimension");
        }
        v.channel_scales.assign(pc->scale()->begin(), pc->scale()->end());
      } else {
        // Newer exporters keep the float32 scales in a constant buffer of their own.
        if (pc->num_scales() != channels) {
          return bad(
              fmt::format("{} per-channel scales for {} channels", pc->num_scales(), channels));
        }
        ET_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, constant_bytes(pc->scale_buffer_idx()));
        if (bytes.size() < channels * sizeof(float)) {
          return bad(fmt::format("the per-channel scale buffer holds {} bytes, {} scales need {}",
                                 bytes.size(), channels, channels * sizeof(float)));
        }
        v.channel_scales.resize(channels);
        std::memcpy(v.channel_scales.data(), bytes.data(), channels * sizeof(float));
      }
      if (v.dtype == DataType::kQcInt4) {  // per-channel int4: one group a row
        if (v.dims.size() != 2 || v.channel_dim != 0 ||
            !kernels::int4_gemm_fits(v.dims[1], v.dims[1])) {
          return not_supported(fmt::format(
              "XNNPACK payload: qcint4 weights [{}] with channels along dim {} (this backend "
              "runs [N, K] weights, K even, channels along dim 0)",
              fmt::join(v.dims, ", "), v.channel_dim));
        }
        v.group_size = static_cast<uint32_t>(v.dims[1]);
      }
      return Status();
    }
    if (const fb::PerChannelGroupQuant* pg = q.quant_as_PerChannelGroupQuant()) {
      return parse_group_quantization(v, *pg);
    }
    return bad("a quantized value without quantization parameters");
  }

  // Blockwise int4 weights (ExecuTorch's 8da4w): a [N, K] qbint4 constant with one
  // scale per group of group_size values along K, the scales bfloat16 in a constant
  // buffer of their own (or float32 inline).
  Status parse_group_quantization(GraphValue& v, const fb::PerChannelGroupQuant& pg) {
    if (v.dtype != DataType::kQbInt4) {
      return not_supported(fmt::format(
          "XNNPACK payload: per-group quantization of a {} value (only qbint4 weights have it)",
          data_type_name(v.dtype)));
    }
    if (v.dims.size() != 2 || pg.channel_dim() != 0) {
      return not_supported(
          fmt::format("XNNPACK payload: qbint4 weights of {} dims grouped along dim {} (this "
                      "backend runs [N, K] weights with channels along dim 0)",
                      v.dims.size(), pg.channel_dim()));
    }
    const size_t n = v.dims[0], k = v.dims[1];
    if (pg.group_size() <= 0 || !kernels::int4_gemm_fits(k, static_cast<size_t>(pg.group_size()))) {
      return bad(
          fmt::format("qbint4 weights [{}, {}] in groups of {} (K must be even and a "
                      "multiple of the group size)",
                      n, k, pg.group_size()));
    }
    v.group_size = static_cast<uint32_t>(pg.group_size());
    const size_t scales = n * (k / v.group_size);
    if (pg.scale() && pg.scale()->size() > 0) {
      if (pg.scale()->size() != scales) {
        return bad(fmt::format("{} group scales for {} groups", pg.scale()->size(), scales));
      }
      v.channel_scales.assign(pg.scale()->begin(), pg.scale()->end());
      return Status();
    }
    if (pg.num_scales() != scales) {
      return bad(fmt::format("{} group scales for {} groups", pg.num_scales(), scales));
    }
    ET_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, constant_bytes(pg.scale_buffer_idx()));
    if (bytes.size() < scales * sizeof(uint16_t)) {
      return bad(fmt::format("the group scale buffer holds {} bytes, {} bfloat16 scales need {}",
                             bytes.size(), scales, scales * sizeof(uint16_t)));
    }
    v.channel_scales.resize(scales);
    for (size_t i = 0; i < scales; ++i) {
      uint16_t bits;
      std::memcpy(&bits, bytes.data() + i * sizeof(uint16_t), sizeof(bits));
      const uint32_t wide = uint32_t{bits} << 16;
      std::memcpy(&v.channel_scales[i], &wide, sizeof(float));
    }
    return Status();
  }

  // The bytes of constant buffer `index` (named data, the payload's constant section or
  // an old-style inline buffer).
  Result<std::span<const uint8_t>> constant_bytes(uint32_t index) {
    if (root_.constants() && root_.constants()->size() > 1) {
      if (index >= root_.constants()->size()) {
        return bad(fmt::format("constant index {} is out of range (have {})", index,
                               root_.constants()->size()));
      }
      const fb::ConstantRef* ref = root_.constants()->Get(index);
      if (ref->offset() == kInNamedData) {
        if (!ref->named_key()) return bad(fmt::format("constant {} has no named key", index));
        auto found = named_data_(ref->named_key()->string_view());
        if (!found.ok()) {
          // Usually a program exported with its weights in a .ptd, loaded without it:
          // the lookup's message says so.
          return invalid_argument(
              fmt::format("XNNPACK payload: constant {}: {}", index, found.status().message()));
        }
        return *found;
      }
      const auto& section = sections_.constants;
      if (ref->offset() > section.size() || ref->size() > section.size() - ref->offset()) {
        return bad(fmt::format("constant {} [{}, +{}) lies outside the {}-byte constant data",
                               index, ref->offset(), ref->size(), section.size()));
      }
      return section.subspan(ref->offset(), ref->size());
    }
    if (!root_.inline_buffers() || index >= root_.inline_buffers()->size() ||
        !root_.inline_buffers()->Get(index)->bytes()) {
      return bad(fmt::format("constant buffer {} does not exist", index));
    }
    const auto* b = root_.inline_buffers()->Get(index)->bytes();
    return std::span<const uint8_t>(b->data(), b->size());
  }

  Status resolve_constant(GraphValue& v, uint32_t index) {
    if (v.dtype == DataType::kQdInt8) {
      return not_supported(
          "XNNPACK payload: a constant qdint8 value (it is quantized at run time)");
    }
    ET_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, constant_bytes(index));
    if (v.is_int4()) {
      if (v.group_size == 0) return bad("4-bit weights without their quantization");
      if (bytes.size() < v.nbytes()) {
        return bad(fmt::format("constant holds {} bytes, its {} [{}] needs {}", bytes.size(),
                               data_type_name(v.dtype), fmt::join(v.dims, ", "), v.nbytes()));
      }
      kernels::Int4Weights packed = kernels::pack_int4_weights(bytes.data(), v.dims[0], v.dims[1],
                                                               v.group_size, v.channel_scales);
      const size_t packed_bytes =
          packed.packed.size() + sizeof(float) * (packed.scales.size() + packed.scaled_sums.size());
      v.int4 = share_counted(std::move(packed), packed_bytes);
      v.data = v.int4->packed.data();               // a constant; kernels read v.int4
      std::vector<float>().swap(v.channel_scales);  // kept in v.int4, shared by every copy
      return Status();
    }
    if (bytes.size() < v.nbytes()) {
      return bad(fmt::format("constant holds {} bytes, its {} {} needs {}", bytes.size(),
                             data_type_name(v.dtype), fmt::join(v.dims, "x"), v.nbytes()));
    }
    if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) != 0 ||
        !over_read_is_safe(bytes.data(), v.nbytes())) {
      auto copy = std::make_unique<float[]>((v.nbytes() + kXnnExtraBytes + sizeof(float) - 1) /
                                            sizeof(float));
      std::memcpy(copy.get(), bytes.data(), v.nbytes());
      v.data = copy.get();
      graph_.owned_constants.push_back(std::move(copy));
    } else {
      v.data = bytes.data();
    }
    return Status();
  }

  Status parse_externals() {
    const uint32_t count = root_.num_externs();
    const size_t ninputs = root_.input_ids() ? root_.input_ids()->size() : 0;
    const size_t noutputs = root_.output_ids() ? root_.output_ids()->size() : 0;
    if (count != ninputs + noutputs || count > 4096) {
      return bad(fmt::format("{} externals declared, {} inputs and {} outputs listed", count,
                             ninputs, noutputs));
    }
    graph_.externals.assign(count, kNoValue);
    graph_.num_inputs = ninputs;
    auto take = [&](const flatbuffers::Vector<uint32_t>* ids, uint32_t flag,
                    std::string_view what) -> Status {
      if (!ids) return Status();
      for (uint32_t id : *ids) {
        const GraphValue* v = value(id);
        if (!v) return bad(fmt::format("{} id {} is not a defined value", what, id));
        if (!(v->flags & flag) || v->external_id >= count) {
          return bad(fmt::format("{} {} is not marked as one (flags {:#x}, external id {})", what,
                                 id, v->flags, v->external_id));
        }
        const bool is_input_slot = v->external_id < ninputs;
        if (is_input_slot != (flag == kExternalInput) ||
            graph_.externals[v->external_id] != kNoValue) {
          return bad(fmt::format("{} {} has external id {}, which is taken or of the wrong kind",
                                 what, id, v->external_id));
        }
        graph_.externals[v->external_id] = id;
      }
      return Status();
    };
    ET_RETURN_IF_ERROR(take(root_.input_ids(), kExternalInput, "input"));
    ET_RETURN_IF_ERROR(take(root_.output_ids(), kExternalOutput, "output"));
    for (const GraphValue& v : graph_.values) {
      if (v.defined && v.flags &&
          (v.external_id >= count || graph_.externals[v.external_id] == kNoValue)) {
        return bad(fmt::format("external id {} is flagged but not listed", v.external_id));
      }
    }
    return Status();
  }

  const GraphValue* value(uint32_t id) const {
    return id < graph_.values.size() && graph_.values[id].defined ? &graph_.values[id] : nullptr;
  }

  Status parse_node(const fb::Node& n) {
    const int code = static_cast<int>(n.kind_type());
    if (code < 1 || code > kLastNodeType || !n.kind()) {
      return bad(fmt::format("unknown node type {}", code));
    }
    GraphNode node;
    node.type = static_cast<NodeType>(code);
    node.debug_handle = n.debug_handle();
    if (n.output_range()) {
      node.output_min = n.output_range()->output_min();
      node.output_max = n.output_range()->output_max();
      if (!(node.output_min <= node.output_max)) {
        return bad(fmt::format("{} has output range [{}, {}]", node_type_name(node.type),
                               node.output_min, node.output_max));
      }
    }
    fill_node(node, n.kind());
    for (uint32_t id : node.inputs) {
      if (id != kNoValue && !value(id)) {
        return bad(
            fmt::format("{} reads value {}, which is not defined", node_type_name(node.type), id));
      }
    }
    for (uint32_t id : node.outputs) {
      const GraphValue* v = value(id);
      if (!v || v->data || (v->flags & kExternalInput)) {
        return bad(fmt::format("{} writes value {}, which is undefined, constant or an input",
                               node_type_name(node.type), id));
      }
    }
    if (node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.empty()) {
      return bad(fmt::format("{} lacks an input or output", node_type_name(node.type)));
    }
    graph_.nodes.push_back(std::move(node));
    return Status();
  }

  // Reads the parameter table of `node.type` (the verifier checked it has that type).
  static void fill_node(GraphNode& node, const void* table) {
    switch (node.type) {
      case NodeType::kFullyConnected: {
        auto* t = static_cast<const fb::FullyConnected*>(table);
        node.inputs = {t->input_id(), t->filter_id(), t->bias_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kConv2d:
      case NodeType::kDepthwiseConv2d:
      case NodeType::kConvTranspose2d: {
        auto* t = static_cast<const fb::Conv*>(table);
        node.params = {t->padding_top(),
                       t->padding_right(),
                       t->padding_bottom(),
                       t->padding_left(),
                       t->kernel_h(),
                       t->kernel_w(),
                       t->stride_h(),
                       t->stride_w(),
                       t->dilation_h(),
                       t->dilation_w(),
                       t->group_input_channels(),
                       t->group_output_channels(),
                       t->groups(),
                       t->adjustment_h(),
                       t->adjustment_w()};
        node.inputs = {t->input_id(), t->filter_id(), t->bias_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kAvgPooling2d:
      case NodeType::kMaxPooling2d: {
        auto* t = static_cast<const fb::Pooling*>(table);
        node.params = {t->padding_top(), t->padding_right(), t->padding_bottom(), t->padding_left(),
                       t->pool_h(),      t->pool_w(),        t->stride_h(),       t->stride_w(),
                       t->dilation_h(),  t->dilation_w()};
        node.inputs = {t->input_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kArgMaxPooling2d: {
        auto* t = static_cast<const fb::ArgMaxPooling*>(table);
        node.params = {t->padding_top(),  t->padding_right(), t->padding_bottom(),
                       t->padding_left(), t->pool_h(),        t->pool_w()};
        node.inputs = {t->input_id()};
        node.outputs = {t->output_value_id(), t->output_index_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kStaticTranspose: {
        auto* t = static_cast<const fb::Transpose*>(table);
        node.list = to_sizes(t->perm());
        node.inputs = {t->input_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kStaticReshape: {
        auto* t = static_cast<const fb::Reshape*>(table);
        node.list = to_sizes(t->new_shape());
        node.inputs = {t->input_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kStaticSlice: {
        auto* t = static_cast<const fb::Slice*>(table);
        node.list = to_sizes(t->offsets());
        node.list2 = to_sizes(t->sizes());
        node.inputs = {t->input_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kStaticConstantPad: {
        auto* t = static_cast<const fb::ConstantPad*>(table);
        node.list = to_sizes(t->pre_paddings());
        node.list2 = to_sizes(t->post_paddings());
        node.scalar = t->padding_value();
        node.inputs = {t->input_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kStaticResizeBilinear2D: {
        auto* t = static_cast<const fb::ResizeBilinear*>(table);
        node.params[0] = t->new_height();
        node.params[1] = t->new_width();
        node.inputs = {t->input_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kConcatenate2:
      case NodeType::kConcatenate3:
      case NodeType::kConcatenate4:
      case NodeType::kConcatenate5: {
        auto* t = static_cast<const fb::Concat*>(table);
        const size_t n =
            static_cast<size_t>(node.type) - static_cast<size_t>(NodeType::kConcatenate2) + 2;
        const size_t count = node.type == NodeType::kConcatenate5 ? 5 : n;
        const uint32_t ids[5] = {t->input1_id(), t->input2_id(), t->input3_id(), t->input4_id(),
                                 t->input5_id()};
        node.inputs.assign(ids, ids + count);
        node.params[0] = t->axis();
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kElu: {
        auto* t = static_cast<const fb::Elu*>(table);
        node.scalar = t->alpha();
        node.inputs = {t->input_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kLeakyReLU: {
        auto* t = static_cast<const fb::LeakyRelu*>(table);
        node.scalar = t->negative_slope();
        node.inputs = {t->input_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kScaledDotProductAttention: {
        auto* t = static_cast<const fb::Attention*>(table);
        node.inputs = {t->query_id(), t->key_id(), t->value_id(), t->scale_id(), t->mask_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      case NodeType::kAdd:
      case NodeType::kDiv:
      case NodeType::kMinimum:
      case NodeType::kMaximum:
      case NodeType::kMultiply:
      case NodeType::kSubtract:
      case NodeType::kPReLU:
      case NodeType::kBatchMatrixMultiply: {
        auto* t = static_cast<const fb::Binary*>(table);
        node.inputs = {t->input1_id(), t->input2_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
      default: {  // every remaining type is a unary node
        auto* t = static_cast<const fb::Unary*>(table);
        node.inputs = {t->input_id()};
        node.outputs = {t->output_id()};
        node.flags = t->flags();
        return;
      }
    }
  }

  const fb::Graph& root_;
  Sections sections_;
  const NamedDataLookup& named_data_;
  Graph graph_;
};

}  // namespace

Result<Graph> parse_graph(std::span<const uint8_t> payload, const NamedDataLookup& named_data) {
  ET_ASSIGN_OR_RETURN(Sections sections, split_payload(payload));
  const auto& fbytes = sections.flatbuffer;
  if (fbytes.size() < 8 || (std::memcmp(fbytes.data() + 4, "XN00", 4) != 0 &&
                            std::memcmp(fbytes.data() + 4, "XN01", 4) != 0)) {
    return bad("the flatbuffer lacks the XN00/XN01 identifier");
  }
  // Flatbuffer reads assume alignment; a misaligned blob is read from an aligned copy.
  std::vector<uint64_t> aligned;
  const uint8_t* base = fbytes.data();
  if (reinterpret_cast<uintptr_t>(base) % alignof(uint64_t) != 0) {
    aligned.resize((fbytes.size() + 7) / 8);
    std::memcpy(aligned.data(), fbytes.data(), fbytes.size());
    base = reinterpret_cast<const uint8_t*>(aligned.data());
  }
  flatbuffers::Verifier verifier(base, fbytes.size(), /*max_depth=*/64,
                                 /*max_tables=*/10'000'000);
  if (!verifier.VerifyBuffer<fb::Graph>(nullptr)) {
    return bad("the flatbuffer is malformed (it fails verification)");
  }
  ET_ASSIGN_OR_RETURN(
      Graph graph,
      GraphParser(*flatbuffers::GetRoot<fb::Graph>(base), sections, named_data).parse());
  graph.owned_flatbuffer = std::move(aligned);
  return graph;
}

namespace {
std::atomic<int64_t> live_kernel_weight_bytes{0};
}  // namespace

uint64_t kernel_weight_bytes() {
  return static_cast<uint64_t>(live_kernel_weight_bytes.load(std::memory_order_relaxed));
}

void count_kernel_weight_bytes(int64_t delta) {
  live_kernel_weight_bytes.fetch_add(delta, std::memory_order_relaxed);
}

bool over_read_is_safe(const void* data, size_t nbytes) {
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto last = reinterpret_cast<uintptr_t>(data) + (nbytes ? nbytes - 1 : 0);
  return last / page == (last + kXnnExtraBytes) / page;
}

}  // namespace et::xnn
