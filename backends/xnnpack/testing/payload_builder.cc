#include "backends/xnnpack/testing/payload_builder.h"

#include <flatbuffers/flatbuffers.h>

#include <array>
#include <cstring>

#include "backends/xnnpack/schema/xnn_graph_generated.h"

namespace et::xnn::testing {

struct PayloadBuilder::State {
  using Quant = PayloadBuilder::Quant;

  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Value>> values;
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  std::vector<uint32_t> inputs, outputs;
  std::vector<uint8_t> constant_bytes;
  std::vector<flatbuffers::Offset<fb::ConstantRef>> constants;
  uint32_t next_id = 0;
  uint32_t next_external = 0;
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  fb::NodeKind pending_type = fb::NodeKind::NONE;
  flatbuffers::Offset<void> pending;

  void flush() {
    if (pending_type == fb::NodeKind::NONE) return;
    flatbuffers::Offset<fb::OutputRange> range;
    if (lo != -std::numeric_limits<float>::infinity() ||
        hi != std::numeric_limits<float>::infinity()) {
      range = fb::CreateOutputRange(fbb, lo, hi);
    }
    nodes.push_back(
        fb::CreateNode(fbb, pending_type, pending, static_cast<uint32_t>(nodes.size()), range));
    pending_type = fb::NodeKind::NONE;
    lo = -std::numeric_limits<float>::infinity();
    hi = std::numeric_limits<float>::infinity();
  }
  // A value (quantized when `q` is set) with id `id`.
  uint32_t add_value(DataType type, const std::vector<size_t>& dims, uint32_t flags,
                     uint32_t external_id, uint32_t constant_index, uint32_t id, const Quant* q) {
    std::vector<uint32_t> d(dims.begin(), dims.end());
    auto t =
        fb::CreateTensorValue(fbb, static_cast<fb::DataType>(type), static_cast<uint32_t>(d.size()),
                              fbb.CreateVector(d), constant_index, external_id, flags, id);
    if (!q) {
      values.push_back(fb::CreateValue(fbb, fb::ValueKind::TensorValue, t.Union()));
    } else if (q->nonbatch_dims != 0) {
      auto pt = fb::CreatePerTokenDynamicQuant(fbb, q->nonbatch_dims);
      auto qt =
          fb::CreateQuantizedTensorValue(fbb, t, fb::QuantParams::PerTokenDynamicQuant, pt.Union());
      values.push_back(fb::CreateValue(fbb, fb::ValueKind::QuantizedTensorValue, qt.Union()));
    } else if (q->scales_in_buffer) {
      const uint32_t index =
          add_constant(q->channel_scales.data(), q->channel_scales.size() * sizeof(float));
      auto pc =
          fb::CreatePerChannelQuant(fbb, fbb.CreateVector(std::vector<float>{}), q->channel_dim,
                                    index, static_cast<uint32_t>(q->channel_scales.size()));
      auto qt =
          fb::CreateQuantizedTensorValue(fbb, t, fb::QuantParams::PerChannelQuant, pc.Union());
      values.push_back(fb::CreateValue(fbb, fb::ValueKind::QuantizedTensorValue, qt.Union()));
    } else if (q->channel_scales.empty()) {
      auto pt = fb::CreatePerTensorQuant(fbb, q->scale, q->zero_point);
      auto qt = fb::CreateQuantizedTensorValue(fbb, t, fb::QuantParams::PerTensorQuant, pt.Union());
      values.push_back(fb::CreateValue(fbb, fb::ValueKind::QuantizedTensorValue, qt.Union()));
    } else {
      auto pc = fb::CreatePerChannelQuant(fbb, fbb.CreateVector(q->channel_scales), q->channel_dim);
      auto qt =
          fb::CreateQuantizedTensorValue(fbb, t, fb::QuantParams::PerChannelQuant, pc.Union());
      values.push_back(fb::CreateValue(fbb, fb::ValueKind::QuantizedTensorValue, qt.Union()));
    }
    next_id = std::max(next_id, id + 1);
    return id;
  }
  // `n` bytes appended to the constant section (16-byte aligned); the constant's index.
  uint32_t add_constant(const void* data, size_t n) {
    while (constant_bytes.size() % 16) constant_bytes.push_back(0);
    const uint64_t offset = constant_bytes.size();
    constant_bytes.resize(offset + n);
    std::memcpy(constant_bytes.data() + offset, data, n);
    constants.push_back(fb::CreateConstantRef(fbb, offset, n));
    return static_cast<uint32_t>(constants.size() - 1);
  }
  void add(NodeType type, flatbuffers::Offset<void> table) {
    flush();
    pending_type = static_cast<fb::NodeKind>(type);
    pending = table;
  }
};

PayloadBuilder::PayloadBuilder() : s_(new State) {
  s_->constants.push_back(fb::CreateConstantRef(s_->fbb, 0, 0));  // the placeholder
}
PayloadBuilder::~PayloadBuilder() = default;
PayloadBuilder::PayloadBuilder(PayloadBuilder&&) noexcept = default;
PayloadBuilder& PayloadBuilder::operator=(PayloadBuilder&&) noexcept = default;

uint32_t PayloadBuilder::value(DataType type, std::vector<size_t> dims, uint32_t flags,
                               uint32_t external_id, uint32_t constant_index, uint32_t id) {
  return s_->add_value(type, dims, flags, external_id, constant_index, id, nullptr);
}

uint32_t PayloadBuilder::make(DataType type, std::vector<size_t> dims, uint32_t flags,
                              uint32_t external_id, uint32_t constant_index, const Quant* q) {
  if (flags & kExternalInput) s_->inputs.push_back(s_->next_id);
  if (flags & kExternalOutput) s_->outputs.push_back(s_->next_id);
  return s_->add_value(type, dims, flags, external_id, constant_index, s_->next_id, q);
}

uint32_t PayloadBuilder::quantized_input(std::vector<size_t> dims, DataType type, Quant q) {
  return make(type, std::move(dims), kExternalInput, s_->next_external++, 0, &q);
}
uint32_t PayloadBuilder::quantized_output(std::vector<size_t> dims, DataType type, Quant q) {
  return make(type, std::move(dims), kExternalOutput, s_->next_external++, 0, &q);
}
uint32_t PayloadBuilder::quantized_internal(std::vector<size_t> dims, DataType type, Quant q) {
  return make(type, std::move(dims), 0, kNoValue, 0, &q);
}
uint32_t PayloadBuilder::quantized_constant(std::vector<size_t> dims, DataType type, Quant q,
                                            std::vector<uint8_t> data) {
  const uint32_t index = s_->add_constant(data.data(), data.size());
  return make(type, std::move(dims), 0, kNoValue, index, &q);
}

uint32_t PayloadBuilder::input(std::vector<size_t> dims, DataType type) {
  return make(type, std::move(dims), kExternalInput, s_->next_external++, 0, nullptr);
}
uint32_t PayloadBuilder::output(std::vector<size_t> dims, DataType type) {
  return make(type, std::move(dims), kExternalOutput, s_->next_external++, 0, nullptr);
}
uint32_t PayloadBuilder::internal(std::vector<size_t> dims, DataType type) {
  return make(type, std::move(dims), 0, kNoValue, 0, nullptr);
}
uint32_t PayloadBuilder::constant(std::vector<size_t> dims, std::vector<float> data) {
  const uint32_t index = s_->add_constant(data.data(), data.size() * sizeof(float));
  return make(DataType::kFp32, std::move(dims), 0, kNoValue, index, nullptr);
}

void PayloadBuilder::unary(NodeType type, uint32_t in, uint32_t out, float scalar) {
  auto& f = s_->fbb;
  if (type == NodeType::kElu) return s_->add(type, fb::CreateElu(f, scalar, in, out, 0).Union());
  if (type == NodeType::kLeakyReLU) {
    return s_->add(type, fb::CreateLeakyRelu(f, scalar, in, out, 0).Union());
  }
  s_->add(type, fb::CreateUnary(f, in, out, 0).Union());
}
void PayloadBuilder::binary(NodeType type, uint32_t a, uint32_t b, uint32_t out, uint32_t flags) {
  s_->add(type, fb::CreateBinary(s_->fbb, a, b, out, flags).Union());
}
void PayloadBuilder::fully_connected(uint32_t in, uint32_t filter, uint32_t bias, uint32_t out,
                                     uint32_t flags) {
  s_->add(NodeType::kFullyConnected,
          fb::CreateFullyConnected(s_->fbb, in, filter, bias, out, flags).Union());
}
void PayloadBuilder::conv(NodeType type, std::array<uint32_t, 15> p, uint32_t in, uint32_t filter,
                          uint32_t bias, uint32_t out) {
  s_->add(type, fb::CreateConv(s_->fbb, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9],
                               p[10], p[11], p[12], p[13], p[14], in, filter, bias, out, 0)
                    .Union());
}
void PayloadBuilder::pooling(NodeType type, std::array<uint32_t, 10> p, uint32_t in, uint32_t out) {
  s_->add(type, fb::CreatePooling(s_->fbb, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7],
                                  std::max(p[8], 1u), std::max(p[9], 1u), in, out, 0)
                    .Union());
}
void PayloadBuilder::argmax_pooling(std::array<uint32_t, 6> p, uint32_t in, uint32_t out,
                                    uint32_t index) {
  s_->add(NodeType::kArgMaxPooling2d,
          fb::CreateArgMaxPooling(s_->fbb, p[0], p[1], p[2], p[3], p[4], p[5], in, out, index, 0)
              .Union());
}
void PayloadBuilder::resize_bilinear(uint32_t height, uint32_t width, uint32_t in, uint32_t out,
                                     uint32_t flags) {
  s_->add(NodeType::kStaticResizeBilinear2D,
          fb::CreateResizeBilinear(s_->fbb, height, width, in, out, flags).Union());
}
void PayloadBuilder::transpose(std::vector<uint32_t> perm, uint32_t in, uint32_t out) {
  auto v = s_->fbb.CreateVector(perm);
  s_->add(NodeType::kStaticTranspose,
          fb::CreateTranspose(s_->fbb, static_cast<uint32_t>(perm.size()), v, in, out, 0).Union());
}
void PayloadBuilder::reshape(std::vector<uint32_t> shape, uint32_t in, uint32_t out) {
  auto v = s_->fbb.CreateVector(shape);
  s_->add(NodeType::kStaticReshape,
          fb::CreateReshape(s_->fbb, static_cast<uint32_t>(shape.size()), v, in, out, 0).Union());
}
void PayloadBuilder::slice(std::vector<uint32_t> offsets, std::vector<uint32_t> sizes, uint32_t in,
                           uint32_t out) {
  auto o = s_->fbb.CreateVector(offsets);
  auto z = s_->fbb.CreateVector(sizes);
  s_->add(
      NodeType::kStaticSlice,
      fb::CreateSlice(s_->fbb, static_cast<uint32_t>(offsets.size()), o, z, in, out, 0).Union());
}
void PayloadBuilder::pad(std::vector<uint32_t> pre, std::vector<uint32_t> post, float value,
                         uint32_t in, uint32_t out) {
  auto a = s_->fbb.CreateVector(pre);
  auto b = s_->fbb.CreateVector(post);
  s_->add(NodeType::kStaticConstantPad,
          fb::CreateConstantPad(s_->fbb, a, b, value, in, out, 0).Union());
}
void PayloadBuilder::concat(uint32_t axis, std::vector<uint32_t> inputs, uint32_t out) {
  inputs.resize(5, kNoValue);
  const size_t n =
      std::count_if(inputs.begin(), inputs.end(), [](uint32_t i) { return i != kNoValue; });
  const NodeType type = n == 5 ? NodeType::kConcatenate5
                               : static_cast<NodeType>(static_cast<int>(NodeType::kConcatenate2) +
                                                       static_cast<int>(n) - 2);
  s_->add(type, fb::CreateConcat(s_->fbb, axis, inputs[0], inputs[1], inputs[2], inputs[3], out, 0,
                                 inputs[4])
                    .Union());
}
void PayloadBuilder::attention(uint32_t q, uint32_t k, uint32_t v, uint32_t scale, uint32_t mask,
                               uint32_t out) {
  s_->add(NodeType::kScaledDotProductAttention,
          fb::CreateAttention(s_->fbb, q, k, v, scale, mask, out, 0).Union());
}
void PayloadBuilder::set_output_range(float lo, float hi) {
  s_->lo = lo;
  s_->hi = hi;
}

std::vector<uint8_t> PayloadBuilder::finish(bool with_header) {
  s_->flush();
  auto& f = s_->fbb;
  auto root = fb::CreateGraph(
      f, f.CreateString("0"), f.CreateVector(s_->nodes), f.CreateVector(s_->values),
      static_cast<uint32_t>(s_->inputs.size() + s_->outputs.size()), f.CreateVector(s_->inputs),
      f.CreateVector(s_->outputs), 0, 0, f.CreateVector(s_->constants));
  f.Finish(root, "XN00");
  std::vector<uint8_t> fbytes(f.GetBufferPointer(), f.GetBufferPointer() + f.GetSize());
  if (!with_header) return fbytes;
  const uint32_t fb_offset = 32;
  const uint32_t const_offset = static_cast<uint32_t>((fb_offset + fbytes.size() + 15) / 16 * 16);
  std::array<uint8_t, 32> header{};
  std::memcpy(header.data() + 4, "XH00", 4);
  const uint16_t header_size = 30;
  const uint32_t fb_size = static_cast<uint32_t>(fbytes.size());
  const uint64_t const_size = s_->constant_bytes.size();
  std::memcpy(header.data() + 8, &header_size, 2);
  std::memcpy(header.data() + 10, &fb_offset, 4);
  std::memcpy(header.data() + 14, &fb_size, 4);
  std::memcpy(header.data() + 18, &const_offset, 4);
  std::memcpy(header.data() + 22, &const_size, 8);
  std::vector<uint8_t> out(header.begin(), header.end());
  out.insert(out.end(), fbytes.begin(), fbytes.end());
  out.resize(const_offset, 0);
  out.insert(out.end(), s_->constant_bytes.begin(), s_->constant_bytes.end());
  return out;
}

}  // namespace et::xnn::testing
