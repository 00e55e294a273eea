// Builds XNNPACK delegate payloads for tests: values, nodes, constants in the
// payload's constant section, with or without the XH00 header.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backends/xnnpack/graph.h"

namespace et::xnn::testing {

class PayloadBuilder {
 public:
  PayloadBuilder();
  ~PayloadBuilder();
  PayloadBuilder(PayloadBuilder&&) noexcept;
  PayloadBuilder& operator=(PayloadBuilder&&) noexcept;

  // Values get ids 0, 1, 2, ... in the order they are made. Inputs and outputs get
  // external ids in the order made; make every input before the first output.
  uint32_t input(std::vector<size_t> dims, DataType type = DataType::kFp32);
  uint32_t output(std::vector<size_t> dims, DataType type = DataType::kFp32);
  uint32_t internal(std::vector<size_t> dims, DataType type = DataType::kFp32);
  uint32_t constant(std::vector<size_t> dims, std::vector<float> data);
  // Raw value, for malformed payloads.
  uint32_t value(DataType type, std::vector<size_t> dims, uint32_t flags, uint32_t external_id,
                 uint32_t constant_index, uint32_t id);

  // Quantization: per tensor (scale, zero point), or per channel when channel_scales is
  // set (one scale per entry of dims[channel_dim]; in a constant buffer of their own,
  // as newer exporters write them, with scales_in_buffer), or per token (qdint8) when
  // nonbatch_dims is set.
  struct Quant {
    float scale = 1.0f;
    int32_t zero_point = 0;
    std::vector<float> channel_scales;
    int32_t channel_dim = 0;
    bool scales_in_buffer = false;
    int32_t nonbatch_dims = 0;
  };
  uint32_t quantized_input(std::vector<size_t> dims, DataType type, Quant q);
  uint32_t quantized_output(std::vector<size_t> dims, DataType type, Quant q);
  uint32_t quantized_internal(std::vector<size_t> dims, DataType type, Quant q);
  // A quantized constant holding `bytes` (numel x the type's size).
  uint32_t quantized_constant(std::vector<size_t> dims, DataType type, Quant q,
                              std::vector<uint8_t> bytes);

  void unary(NodeType type, uint32_t in, uint32_t out, float scalar = 0);
  void binary(NodeType type, uint32_t a, uint32_t b, uint32_t out, uint32_t flags = 0);
  void fully_connected(uint32_t in, uint32_t filter, uint32_t bias, uint32_t out,
                       uint32_t flags = 0);
  // params: padding t/r/b/l, kernel h/w, stride h/w, dilation h/w, group in/out, groups,
  // then (transposed convolutions, default 0) output adjustment h/w
  void conv(NodeType type, std::array<uint32_t, 15> params, uint32_t in, uint32_t filter,
            uint32_t bias, uint32_t out);
  // params: padding t/r/b/l, pool h/w, stride h/w, then dilation h/w (default 0: none)
  void pooling(NodeType type, std::array<uint32_t, 10> params, uint32_t in, uint32_t out);
  // params: padding t/r/b/l, pool h/w (the stride is the pool)
  void argmax_pooling(std::array<uint32_t, 6> params, uint32_t in, uint32_t out, uint32_t index);
  void resize_bilinear(uint32_t height, uint32_t width, uint32_t in, uint32_t out,
                       uint32_t flags = 0);
  void transpose(std::vector<uint32_t> perm, uint32_t in, uint32_t out);
  void reshape(std::vector<uint32_t> shape, uint32_t in, uint32_t out);
  void slice(std::vector<uint32_t> offsets, std::vector<uint32_t> sizes, uint32_t in, uint32_t out);
  void pad(std::vector<uint32_t> pre, std::vector<uint32_t> post, float value, uint32_t in,
           uint32_t out);
  void concat(uint32_t axis, std::vector<uint32_t> inputs, uint32_t out);
  void attention(uint32_t q, uint32_t k, uint32_t v, uint32_t scale, uint32_t mask, uint32_t out);
  // Fused clamp of the last node made.
  void set_output_range(float lo, float hi);

  // The payload; with_header adds the XH00 header and the constant section.
  std::vector<uint8_t> finish(bool with_header = true);

 private:
  struct State;
  uint32_t make(DataType type, std::vector<size_t> dims, uint32_t flags, uint32_t external_id,
                uint32_t constant_index, const Quant* quant);
  std::unique_ptr<State> s_;
};

}  // namespace et::xnn::testing
