// Quantized graphs, in the forms ExecuTorch's XNNPACKQuantizer produces: static int8
// (per-tensor activations, per-channel weights; run by the installed XNNPACK) and
// dynamic int8 linear layers (qdint8 per token x qcint8; run by kernel_quantized.cc),
// against references computed here with the arithmetic docs/xnnpack.md states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/xnnpack/compiled_graph.h"
#include "backends/xnnpack/testing/payload_builder.h"

namespace et::xnn {
namespace {

using testing::PayloadBuilder;
using Floats = std::vector<float>;
using Quant = PayloadBuilder::Quant;

Result<std::span<const uint8_t>> no_named_data(std::string_view key) {
  return not_found(std::string(key));
}

Quant per_tensor(float scale, int32_t zero_point) {
  Quant q;
  q.scale = scale;
  q.zero_point = zero_point;
  return q;
}

Floats sample(size_t n, float amplitude = 2.0f, float phase = 0) {
  Floats v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = amplitude * std::sin(0.7f * static_cast<float>(i) + 0.3f + phase);
  }
  return v;
}

std::vector<int8_t> sample_int8(size_t n, int seed) {
  std::vector<int8_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<int8_t>((static_cast<int>(i) * 37 + seed * 11) % 255 - 127);
  }
  return v;
}

std::vector<uint8_t> bytes_of(const void* data, size_t n) {
  std::vector<uint8_t> b(n);
  std::memcpy(b.data(), data, n);
  return b;
}

struct Built {
  std::vector<uint8_t> payload;
  std::shared_ptr<CompiledGraph> graph;
};

Result<Built> compile(PayloadBuilder& b) {
  Built built;
  built.payload = b.finish();
  ET_ASSIGN_OR_RETURN(Graph g, parse_graph(built.payload, no_named_data));
  ET_ASSIGN_OR_RETURN(built.graph, CompiledGraph::create(std::move(g), {}));
  return built;
}

Floats run1(const CompiledGraph& graph, Floats input) {
  const Graph& g = graph.graph();
  Floats out(g.values[g.externals[1]].numel, NAN);
  std::vector<void*> ptrs{input.data(), out.data()};
  Status s = graph.run(ptrs);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

// ---- Dynamic quantization: the reference ----------------------------------------

struct RowQuant {
  std::vector<int32_t> q;
  float scale;
  int32_t zero_point;
};

// XNNPACK's per-row dynamic quantization (src/xnnpack/quantization.h), written out.
RowQuant quantize_row(const float* x, size_t n) {
  float lo = 0, hi = 0;
  for (size_t i = 0; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  const float inv = lo == hi ? 1.0f : 255.0f / (hi - lo);
  const float from_min = -128.0f - lo * inv, from_max = 127.0f - hi * inv;
  const float zp = (-128.0f + lo * inv) + (127.0f + hi * inv) > 0 ? from_min : from_max;
  RowQuant r;
  r.zero_point = static_cast<int32_t>(std::lrint(std::clamp(zp, -128.0f, 127.0f)));
  r.scale = 1.0f / inv;
  for (size_t i = 0; i < n; ++i) {
    r.q.push_back(
        std::clamp(static_cast<int32_t>(std::lrint(x[i] * inv)) + r.zero_point, -128, 127));
  }
  return r;
}

// y[r][j] = sum_k (q - zp) * w[j][k] * row scale * w_scale[j] + bias[j], clamped.
Floats dynamic_linear_reference(const Floats& x, size_t k, const std::vector<int8_t>& w,
                                bool transposed, const Floats& w_scale, const Floats& bias,
                                float lo, float hi) {
  const size_t n = w_scale.size(), rows = x.size() / k;
  Floats y(rows * n);
  for (size_t r = 0; r < rows; ++r) {
    const RowQuant q = quantize_row(x.data() + r * k, k);
    for (size_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (size_t i = 0; i < k; ++i) {
        acc += (q.q[i] - q.zero_point) * int64_t{transposed ? w[i * n + j] : w[j * k + i]};
      }
      const double v =
          static_cast<double>(acc) * q.scale * w_scale[j] + (bias.empty() ? 0 : bias[j]);
      y[r * n + j] = std::clamp(static_cast<float>(v), lo, hi);
    }
  }
  return y;
}

struct DynamicCase {
  std::vector<size_t> input_dims;
  size_t n;
  bool transposed;
  bool bias;
  bool scales_in_buffer;
  float lo = -INFINITY, hi = INFINITY;
};

// fp32 input -> Convert (qdint8 per token) -> FullyConnected (qcint8 filter) -> fp32.
PayloadBuilder dynamic_linear(const DynamicCase& c, const std::vector<int8_t>& w,
                              const Floats& w_scale, const Floats& bias) {
  const size_t k = c.input_dims.back();
  std::vector<size_t> out_dims = c.input_dims;
  out_dims.back() = c.n;
  PayloadBuilder b;
  const uint32_t in = b.input(c.input_dims);
  const uint32_t out = b.output(out_dims);
  Quant token;
  token.nonbatch_dims = 1;
  const uint32_t q = b.quantized_internal(c.input_dims, DataType::kQdInt8, token);
  Quant channel;
  channel.channel_scales = w_scale;
  channel.channel_dim = c.transposed ? 1 : 0;
  channel.scales_in_buffer = c.scales_in_buffer;
  const uint32_t filter =
      b.quantized_constant(c.transposed ? std::vector<size_t>{k, c.n} : std::vector<size_t>{c.n, k},
                           DataType::kQcInt8, channel, bytes_of(w.data(), w.size()));
  const uint32_t bias_id = c.bias ? b.constant({c.n}, bias) : kNoValue;
  b.unary(NodeType::kConvert, in, q);
  b.fully_connected(q, filter, bias_id, out, c.transposed ? 1 : 0);
  if (c.lo != -INFINITY || c.hi != INFINITY) b.set_output_range(c.lo, c.hi);
  return b;
}

void PrintTo(const DynamicCase& c, std::ostream* os) {
  *os << "input [" << ::testing::PrintToString(c.input_dims) << "] n " << c.n
      << (c.transposed ? " transposed" : "") << (c.bias ? " bias" : "")
      << (c.scales_in_buffer ? " scales-in-buffer" : "");
}

class DynamicLinear : public ::testing::TestWithParam<DynamicCase> {};

TEST_P(DynamicLinear, MatchesXnnpackArithmetic) {
  const DynamicCase& c = GetParam();
  const size_t k = c.input_dims.back();
  const std::vector<int8_t> w = sample_int8(k * c.n, 3);
  Floats w_scale(c.n), bias(c.n);
  for (size_t j = 0; j < c.n; ++j) {
    w_scale[j] = 0.001f * static_cast<float>(j + 1);
    bias[j] = 0.1f * static_cast<float>(j) - 0.2f;
  }
  PayloadBuilder b = dynamic_linear(c, w, w_scale, bias);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  // Both nodes are kernel steps of ours (the installed XNNPACK has no qdint8).
  for (const PlanStep& step : built->graph->steps()) EXPECT_FALSE(step.on_xnnpack);
  size_t numel = 1;
  for (size_t d : c.input_dims) numel *= d;
  Floats x = sample(numel, 2.0f);
  // Row 0 holds only positive values (zero point -128), the last row only zeros.
  for (size_t i = 0; i < k; ++i) x[i] = std::fabs(x[i]) + 0.01f;
  for (size_t i = numel - k; i < numel; ++i) x[i] = 0.0f;
  const Floats want = dynamic_linear_reference(x, k, w, c.transposed, w_scale,
                                               c.bias ? bias : Floats{}, c.lo, c.hi);
  const Floats got = run1(*built->graph, x);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5f * std::max(1.0f, std::fabs(want[i]))) << "element " << i;
  }
  // The all-zero row quantizes to its zero point: the output is the bias.
  const size_t rows = numel / k;
  for (size_t j = 0; j < c.n; ++j) {
    EXPECT_EQ(got[(rows - 1) * c.n + j], std::clamp(c.bias ? bias[j] : 0.0f, c.lo, c.hi));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Forms, DynamicLinear,
    ::testing::Values(DynamicCase{{4, 16}, 8, false, true, true},
                      DynamicCase{{2, 3, 24}, 5, false, true, false},
                      DynamicCase{{3, 20}, 6, true, false, true, -0.05f, 0.05f},
                      DynamicCase{{2, 2, 2, 9}, 4, false, true, true, 0.0f, INFINITY}));

TEST(DynamicLinear, QuantizationErrorIsWithinHalfAStepPerRow) {
  // Independent of the reference above: the result is the float product up to the
  // input's rounding, at most half a step (scale / 2) per element.
  const DynamicCase c{{5, 32}, 7, false, true, true};
  const size_t k = 32;
  const std::vector<int8_t> w = sample_int8(k * c.n, 5);
  Floats w_scale(c.n, 0.01f), bias(c.n, 0.25f);
  PayloadBuilder b = dynamic_linear(c, w, w_scale, bias);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(5 * k, 3.0f, 1.0f);
  const Floats got = run1(*built->graph, x);
  for (size_t r = 0; r < 5; ++r) {
    float lo = 0, hi = 0;
    for (size_t i = 0; i < k; ++i) lo = std::min(lo, x[r * k + i]), hi = std::max(hi, x[r * k + i]);
    const float step = (hi - lo) / 255.0f;
    for (size_t j = 0; j < c.n; ++j) {
      double exact = bias[j], bound = 0;
      for (size_t i = 0; i < k; ++i) {
        exact += x[r * k + i] * w[j * k + i] * 0.01;
        bound += std::fabs(w[j * k + i] * 0.01) * step / 2;
      }
      EXPECT_NEAR(got[r * c.n + j], exact, bound + 1e-5) << r << "," << j;
    }
  }
}

TEST(DynamicLinear, RunsAgainAtASmallerBatch) {
  // Dynamic dims: the graph compiled for fewer rows keeps the row parameters in step.
  const DynamicCase c{{6, 16}, 4, false, true, true};
  const std::vector<int8_t> w = sample_int8(16 * 4, 7);
  const Floats w_scale{0.01f, 0.02f, 0.03f, 0.04f}, bias{0.1f, 0.2f, 0.3f, 0.4f};
  PayloadBuilder b = dynamic_linear(c, w, w_scale, bias);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const std::vector<std::vector<size_t>> dims{{2, 16}};
  auto shaped = built->graph->for_input_dims(dims);
  ASSERT_TRUE(shaped.ok()) << shaped.status().to_string();
  const Floats x = sample(32, 1.5f, 2.0f);
  const Floats want = dynamic_linear_reference(x, 16, w, false, w_scale, bias, -INFINITY, INFINITY);
  const Graph& g = (*shaped)->graph();
  Floats out(g.values[g.externals[1]].numel, NAN);
  Floats in = x;
  std::vector<void*> ptrs{in.data(), out.data()};
  ASSERT_TRUE((*shaped)->run(ptrs).ok());
  ASSERT_EQ(out.size(), want.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], want[i], 1e-5f) << i;
}

// ---- Dynamic quantization: what is refused -----------------------------------------

Status plan_status(PayloadBuilder& b) {
  const std::vector<uint8_t> payload = b.finish();
  auto g = parse_graph(payload, no_named_data);
  if (!g.ok()) return g.status();
  auto compiled = CompiledGraph::create(std::move(*g), {});
  return compiled.ok() ? Status() : compiled.status();
}

TEST(DynamicQuantRefusals, QdInt8GraphInputIsNotSupported) {
  PayloadBuilder b;
  Quant token;
  token.nonbatch_dims = 1;
  const uint32_t in = b.quantized_input({2, 4}, DataType::kQdInt8, token);
  const uint32_t out = b.output({2, 4});
  b.unary(NodeType::kConvert, in, out);
  const Status s = plan_status(b);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported) << s.to_string();
}

TEST(DynamicQuantRefusals, RowsOtherThanTheProductsAreNotSupported) {
  // Parameters per leading dim only (nonbatch_dims 2) do not give one per product row.
  PayloadBuilder b;
  const uint32_t in = b.input({2, 3, 4});
  const uint32_t out = b.output({2, 3, 2});
  Quant token;
  token.nonbatch_dims = 2;
  const uint32_t q = b.quantized_internal({2, 3, 4}, DataType::kQdInt8, token);
  Quant channel;
  channel.channel_scales = {0.1f, 0.2f};
  const uint32_t filter =
      b.quantized_constant({2, 4}, DataType::kQcInt8, channel, std::vector<uint8_t>(8, 1));
  b.unary(NodeType::kConvert, in, q);
  b.fully_connected(q, filter, kNoValue, out);
  const Status s = plan_status(b);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported) << s.to_string();
  EXPECT_NE(s.to_string().find("FullyConnected"), std::string::npos) << s.to_string();
}

TEST(DynamicQuantRefusals, MovingQdInt8BytesIsNotSupported) {
  // A Copy would move the int8 data without its row parameters.
  PayloadBuilder b;
  const uint32_t in = b.input({2, 4});
  const uint32_t out = b.output({2, 2});
  Quant token;
  token.nonbatch_dims = 1;
  const uint32_t q = b.quantized_internal({2, 4}, DataType::kQdInt8, token);
  const uint32_t q2 = b.quantized_internal({2, 4}, DataType::kQdInt8, token);
  Quant channel;
  channel.channel_scales = {0.1f, 0.2f};
  const uint32_t filter =
      b.quantized_constant({2, 4}, DataType::kQcInt8, channel, std::vector<uint8_t>(8, 1));
  b.unary(NodeType::kConvert, in, q);
  b.unary(NodeType::kCopy, q, q2);
  b.fully_connected(q2, filter, kNoValue, out);
  const Status s = plan_status(b);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported) << s.to_string();
  EXPECT_NE(s.to_string().find("Copy"), std::string::npos) << s.to_string();
}

TEST(DynamicQuantRefusals, PerTokenQuantizationOfAnotherTypeIsNotSupported) {
  PayloadBuilder b;
  const uint32_t in = b.input({2, 4});
  Quant token;
  token.nonbatch_dims = 1;
  const uint32_t out = b.quantized_output({2, 4}, DataType::kQInt8, token);
  b.unary(NodeType::kConvert, in, out);
  const Status s = plan_status(b);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported) << s.to_string();
}

TEST(DynamicQuantRefusals, PerChannelScaleBufferOfWrongSizeIsInvalid) {
  PayloadBuilder b;
  const uint32_t in = b.input({2, 4});
  const uint32_t out = b.output({2, 3});
  Quant token;
  token.nonbatch_dims = 1;
  const uint32_t q = b.quantized_internal({2, 4}, DataType::kQdInt8, token);
  Quant channel;
  channel.channel_scales = {0.1f, 0.2f};  // 2 scales for 3 output channels
  channel.scales_in_buffer = true;
  const uint32_t filter =
      b.quantized_constant({3, 4}, DataType::kQcInt8, channel, std::vector<uint8_t>(12, 1));
  b.unary(NodeType::kConvert, in, q);
  b.fully_connected(q, filter, kNoValue, out);
  const Status s = plan_status(b);
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram) << s.to_string();
}

TEST(StaticQuantRefusals, LayoutNodeChangingTheQuantizationIsNotSupported) {
  // A transpose between qint8 values of different scales would need requantizing.
  PayloadBuilder b;
  const Quant a = per_tensor(0.1f, 0), c = per_tensor(0.2f, 0);
  const uint32_t in = b.quantized_input({2, 3}, DataType::kQInt8, a);
  const uint32_t out = b.quantized_output({3, 2}, DataType::kQInt8, c);
  b.transpose({1, 0}, in, out);
  const Status s = plan_status(b);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported) << s.to_string();
}

TEST(StaticQuantRefusals, OutOfRangeZeroPointIsNotSupported) {
  // Our per-channel FullyConnected takes XNNPACK's int8 quantizations only.
  PayloadBuilder b;
  const uint32_t in = b.quantized_input({2, 4}, DataType::kQInt8, per_tensor(0.1f, 0));
  const uint32_t out = b.quantized_output({2, 3}, DataType::kQInt8, per_tensor(0.1f, 1 << 30));
  Quant channel;
  channel.channel_scales = {0.1f, 0.2f, 0.3f};
  const uint32_t filter =
      b.quantized_constant({3, 4}, DataType::kQcInt8, channel, std::vector<uint8_t>(12, 1));
  b.fully_connected(in, filter, kNoValue, out);
  const Status s = plan_status(b);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported) << s.to_string();
}

// ---- Static quantization (the installed XNNPACK) -----------------------------------

int32_t quantize(float x, float scale, int32_t zp) {
  return std::clamp(static_cast<int32_t>(std::lrint(x / scale)) + zp, -128, 127);
}

// fp32 NHWC -> Convert qint8 -> Conv2d (qcint8 filter, qcint32 bias, ReLU range) ->
// MaxPooling 2x2 -> Convert fp32, as the XNNPACKQuantizer's static flow lowers a conv.
TEST(StaticQuant, ConvReluMaxPoolMatchesRequantization) {
  constexpr size_t H = 4, W = 4, C = 2, O = 3;
  const float s_in = 0.02f, s_out = 0.05f;
  const int32_t zp_in = 3, zp_out = -128;
  const Floats w_scale{0.01f, 0.02f, 0.015f};
  const std::vector<int8_t> w = sample_int8(O * 3 * 3 * C, 1);
  const std::vector<int32_t> bias_q{100, -50, 7};
  Floats bias_scales(O);
  for (size_t o = 0; o < O; ++o) bias_scales[o] = s_in * w_scale[o];

  PayloadBuilder b;
  const uint32_t in = b.input({1, H, W, C});
  const uint32_t out = b.output({1, H / 2, W / 2, O});
  const Quant qin = per_tensor(s_in, zp_in), qout = per_tensor(s_out, zp_out);
  const uint32_t x8 = b.quantized_internal({1, H, W, C}, DataType::kQInt8, qin);
  Quant wq;
  wq.channel_scales = w_scale;
  wq.scales_in_buffer = true;
  const uint32_t filter =
      b.quantized_constant({O, 3, 3, C}, DataType::kQcInt8, wq, bytes_of(w.data(), w.size()));
  Quant bq;
  bq.channel_scales = bias_scales;
  bq.scales_in_buffer = true;
  const uint32_t bias =
      b.quantized_constant({O}, DataType::kQcInt32, bq, bytes_of(bias_q.data(), bias_q.size() * 4));
  const uint32_t y8 = b.quantized_internal({1, H, W, O}, DataType::kQInt8, qout);
  const uint32_t p8 = b.quantized_internal({1, H / 2, W / 2, O}, DataType::kQInt8, qout);
  b.unary(NodeType::kConvert, in, x8);
  b.conv(NodeType::kConv2d, {1, 1, 1, 1, 3, 3, 1, 1, 1, 1, C, O, 1, 0, 0}, x8, filter, bias, y8);
  b.set_output_range(0.0f, INFINITY);
  b.pooling(NodeType::kMaxPooling2d, {0, 0, 0, 0, 2, 2, 2, 2, 1, 1}, y8, p8);
  b.unary(NodeType::kConvert, p8, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  ASSERT_EQ(built->graph->steps().size(), 1u);
  EXPECT_TRUE(built->graph->steps()[0].on_xnnpack);

  const Floats x = sample(H * W * C, 1.5f);
  std::vector<int32_t> xq(x.size());
  for (size_t i = 0; i < x.size(); ++i) xq[i] = quantize(x[i], s_in, zp_in);
  std::vector<int32_t> yq(H * W * O);
  for (size_t oy = 0; oy < H; ++oy) {
    for (size_t ox = 0; ox < W; ++ox) {
      for (size_t o = 0; o < O; ++o) {
        int64_t acc = bias_q[o];
        for (size_t ky = 0; ky < 3; ++ky) {
          for (size_t kx = 0; kx < 3; ++kx) {
            const long iy = static_cast<long>(oy + ky) - 1, ix = static_cast<long>(ox + kx) - 1;
            if (iy < 0 || ix < 0 || iy >= static_cast<long>(H) || ix >= static_cast<long>(W))
              continue;
            for (size_t ci = 0; ci < C; ++ci) {
              acc += (xq[(iy * W + ix) * C + ci] - zp_in) *
                     int64_t{w[((o * 3 + ky) * 3 + kx) * C + ci]};
            }
          }
        }
        const float real = static_cast<float>(acc) * s_in * w_scale[o];
        yq[(oy * W + ox) * O + o] = std::max(quantize(real, s_out, zp_out), zp_out);  // ReLU
      }
    }
  }
  Floats want;
  for (size_t py = 0; py < H / 2; ++py) {
    for (size_t px = 0; px < W / 2; ++px) {
      for (size_t o = 0; o < O; ++o) {
        int32_t m = -128;
        for (size_t dy = 0; dy < 2; ++dy) {
          for (size_t dx = 0; dx < 2; ++dx)
            m = std::max(m, yq[((2 * py + dy) * W + 2 * px + dx) * O + o]);
        }
        want.push_back(static_cast<float>(m - zp_out) * s_out);
      }
    }
  }
  const Floats got = run1(*built->graph, x);
  ASSERT_EQ(got.size(), want.size());
  // Requantization rounds once in float: at most one step apart on a tie.
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], s_out * 1.01f) << i;
  size_t exact = 0;
  for (size_t i = 0; i < got.size(); ++i) exact += std::fabs(got[i] - want[i]) < 1e-6f;
  EXPECT_GE(exact, got.size() - 1);
}

// fp32 -> Convert qint8 -> FullyConnected (qcint8 filter, qcint32 bias, a fused range)
// -> Convert fp32, as the static flow lowers nn.Linear. The 2022 XNNPACK refuses
// per-channel fully connected filters: kernel_quantized.cc runs the product with
// XNNPACK's fp32 requantization, so the result is exact, not within a step.
TEST(StaticQuant, FullyConnectedPerChannelMatchesRequantization) {
  constexpr size_t B = 2, K = 12, N = 5;
  const float s_in = 0.03f, s_out = 0.04f;
  const int32_t zp_in = -40, zp_out = 10;
  Floats w_scale(N);
  for (size_t j = 0; j < N; ++j) w_scale[j] = 0.0002f * static_cast<float>(j + 1);
  const std::vector<int8_t> w = sample_int8(N * K, 2);
  std::vector<int32_t> bias_q(N);
  Floats bias_scales(N);
  for (size_t j = 0; j < N; ++j)
    bias_q[j] = static_cast<int32_t>(j * 40) - 80, bias_scales[j] = s_in * w_scale[j];

  PayloadBuilder b;
  const uint32_t in = b.input({B, K});
  const uint32_t out = b.output({B, N});
  const Quant qin = per_tensor(s_in, zp_in), qout = per_tensor(s_out, zp_out);
  const uint32_t x8 = b.quantized_internal({B, K}, DataType::kQInt8, qin);
  Quant wq;
  wq.channel_scales = w_scale;
  wq.scales_in_buffer = true;
  const uint32_t filter =
      b.quantized_constant({N, K}, DataType::kQcInt8, wq, bytes_of(w.data(), w.size()));
  Quant bq;
  bq.channel_scales = bias_scales;
  bq.scales_in_buffer = true;
  const uint32_t bias =
      b.quantized_constant({N}, DataType::kQcInt32, bq, bytes_of(bias_q.data(), N * 4));
  const uint32_t y8 = b.quantized_internal({B, N}, DataType::kQInt8, qout);
  b.unary(NodeType::kConvert, in, x8);
  b.fully_connected(x8, filter, bias, y8);
  b.set_output_range(-0.4f, 0.2f);
  b.unary(NodeType::kConvert, y8, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  ASSERT_EQ(built->graph->steps().size(), 3u);  // XNNPACK, our product, XNNPACK
  EXPECT_FALSE(built->graph->steps()[1].on_xnnpack);

  const Floats x = sample(B * K, 2.0f, 0.5f);
  // The range in output steps: round(-0.4 / 0.04) + 10 = 0, round(0.2 / 0.04) + 10 = 15.
  const int32_t q_lo = 0, q_hi = 15;
  Floats want;
  size_t clamped = 0;
  for (size_t r = 0; r < B; ++r) {
    for (size_t j = 0; j < N; ++j) {
      int64_t acc = bias_q[j];
      for (size_t i = 0; i < K; ++i) {
        acc += (quantize(x[r * K + i], s_in, zp_in) - zp_in) * int64_t{w[j * K + i]};
      }
      const float requant = s_in * w_scale[j] / s_out;
      const auto q =
          static_cast<int32_t>(std::nearbyint(static_cast<float>(acc) * requant)) + zp_out;
      clamped += q < q_lo || q > q_hi;
      want.push_back(static_cast<float>(std::clamp(q, q_lo, q_hi) - zp_out) * s_out);
    }
  }
  EXPECT_GT(clamped, 0u);  // the range matters here
  EXPECT_LT(clamped, want.size());
  const Floats got = run1(*built->graph, x);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
}

}  // namespace
}  // namespace et::xnn
