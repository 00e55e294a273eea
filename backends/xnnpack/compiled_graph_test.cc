// Every node type this backend runs, against a reference computed here, plus the
// plan (XNNPACK runs and kernel steps), replica sharing and refusals.
#include "backends/xnnpack/compiled_graph.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "backends/xnnpack/testing/payload_builder.h"
#include "runtime/core/sanitizers.h"
#include "runtime/core/thread_pool.h"

namespace et::xnn {
namespace {

using testing::PayloadBuilder;
using Floats = std::vector<float>;

Result<std::span<const uint8_t>> no_named_data(std::string_view key) {
  return not_found(std::string(key));
}

// Distinct values in about [-2, 2] (or (0.1, 4] when positive).
Floats sample(size_t n, bool positive = false, float phase = 0) {
  Floats v(n);
  for (size_t i = 0; i < n; ++i) {
    const float x = 2.0f * std::sin(0.7f * static_cast<float>(i) + 0.3f + phase);
    v[i] = positive ? 0.1f + std::fabs(x) * 1.9f + 0.001f * static_cast<float>(i) : x;
  }
  return v;
}

struct Built {
  std::vector<uint8_t> payload;
  std::shared_ptr<CompiledGraph> graph;
};

Result<Built> compile(PayloadBuilder& b, CompileOptions options = {}) {
  Built built;
  built.payload = b.finish();
  ET_ASSIGN_OR_RETURN(Graph g, parse_graph(built.payload, no_named_data));
  ET_ASSIGN_OR_RETURN(built.graph, CompiledGraph::create(std::move(g), options));
  return built;
}

// Runs with `inputs` (by input order) and returns the outputs.
std::vector<Floats> run(const CompiledGraph& graph, std::vector<Floats> inputs) {
  const Graph& g = graph.graph();
  std::vector<Floats> outputs;
  for (size_t i = g.num_inputs; i < g.externals.size(); ++i) {
    outputs.emplace_back(g.values[g.externals[i]].numel, NAN);
  }
  std::vector<void*> ptrs;
  for (Floats& in : inputs) ptrs.push_back(in.data());
  for (Floats& out : outputs) ptrs.push_back(out.data());
  Status s = graph.run(ptrs);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return outputs;
}

void expect_near(const Floats& actual, const Floats& expected, float tol = 1e-5f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tol * std::max(1.0f, std::fabs(expected[i])))
        << "element " << i;
  }
}

// ---- Unary nodes -------------------------------------------------------------------

struct UnaryCase {
  NodeType type;
  std::function<float(float)> ref;
  bool positive = false;
  float scalar = 0;
};

void PrintTo(const UnaryCase& c, std::ostream* os) { *os << node_type_name(c.type); }

class UnaryNode : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryNode, MatchesReference) {
  const UnaryCase& c = GetParam();
  PayloadBuilder b;
  const uint32_t in = b.input({2, 3, 5});
  const uint32_t out = b.output({2, 3, 5});
  b.unary(c.type, in, out, c.scalar);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(30, c.positive);
  Floats want(30);
  for (size_t i = 0; i < 30; ++i) want[i] = c.ref(x[i]);
  expect_near(run(*built->graph, {x})[0], want);
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

INSTANTIATE_TEST_SUITE_P(
    Types, UnaryNode,
    ::testing::Values(
        UnaryCase{NodeType::kAbs, [](float x) { return std::fabs(x); }},
        UnaryCase{NodeType::kNegate, [](float x) { return -x; }},
        UnaryCase{NodeType::kFloor, [](float x) { return std::floor(x); }},
        UnaryCase{NodeType::kCeiling, [](float x) { return std::ceil(x); }},
        UnaryCase{NodeType::kSquareRoot, [](float x) { return std::sqrt(x); }, true},
        UnaryCase{NodeType::kSquare, [](float x) { return x * x; }},
        UnaryCase{NodeType::kSigmoid, sigmoid},
        UnaryCase{NodeType::kHardswish,
                  [](float x) { return x * std::clamp(x + 3.0f, 0.0f, 6.0f) / 6.0f; }},
        UnaryCase{NodeType::kLeakyReLU, [](float x) { return x > 0 ? x : 0.1f * x; }, false, 0.1f},
        UnaryCase{NodeType::kElu, [](float x) { return x > 0 ? x : 0.5f * std::expm1(x); }, false,
                  0.5f},
        UnaryCase{NodeType::kTanh, [](float x) { return std::tanh(x); }},
        UnaryCase{NodeType::kExp, [](float x) { return std::exp(x); }},
        UnaryCase{NodeType::kLog, [](float x) { return std::log(x); }, true},
        UnaryCase{NodeType::kSin, [](float x) { return std::sin(x); }},
        UnaryCase{NodeType::kCos, [](float x) { return std::cos(x); }},
        UnaryCase{NodeType::kGelu,
                  [](float x) { return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f))); }},
        UnaryCase{NodeType::kReciprocalSquareRoot, [](float x) { return 1.0f / std::sqrt(x); },
                  true},
        UnaryCase{NodeType::kCopy, [](float x) { return x; }}),
    [](const auto& param_info) { return std::string(node_type_name(param_info.param.type)); });

TEST(Softmax, NormalisesTheLastDim) {
  PayloadBuilder b;
  const uint32_t in = b.input({3, 4});
  const uint32_t out = b.output({3, 4});
  b.unary(NodeType::kSoftmax, in, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(12);
  Floats want(12);
  for (size_t r = 0; r < 3; ++r) {
    float sum = 0;
    for (size_t c = 0; c < 4; ++c) sum += std::exp(x[r * 4 + c]);
    for (size_t c = 0; c < 4; ++c) want[r * 4 + c] = std::exp(x[r * 4 + c]) / sum;
  }
  expect_near(run(*built->graph, {x})[0], want);
}

TEST(OutputRange, ClampsNodesWithAndWithoutTheirOwnRange) {
  // Clamp (XNNPACK, its own range), Maximum (XNNPACK, separate clamp), Tanh (kernel).
  PayloadBuilder b;
  const uint32_t x = b.input({6});
  const uint32_t y = b.input({6});
  const uint32_t c_out = b.output({6});
  const uint32_t m_out = b.output({6});
  const uint32_t t_out = b.output({6});
  b.unary(NodeType::kClamp, x, c_out);
  b.set_output_range(-0.5f, 1.0f);
  b.binary(NodeType::kMaximum, x, y, m_out);
  b.set_output_range(0.0f, 1.5f);
  b.unary(NodeType::kTanh, x, t_out);
  b.set_output_range(-0.25f, 0.25f);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats xs = sample(6), ys = sample(6, false, 1.0f);
  auto outs = run(*built->graph, {xs, ys});
  Floats c(6), m(6), t(6);
  for (size_t i = 0; i < 6; ++i) {
    c[i] = std::clamp(xs[i], -0.5f, 1.0f);
    m[i] = std::clamp(std::max(xs[i], ys[i]), 0.0f, 1.5f);
    t[i] = std::clamp(std::tanh(xs[i]), -0.25f, 0.25f);
  }
  expect_near(outs[0], c);
  expect_near(outs[1], m);
  expect_near(outs[2], t);
}

// ---- Binary nodes (with broadcasting) ------------------------------------------------

struct BinaryCase {
  NodeType type;
  std::function<float(float, float)> ref;
};

void PrintTo(const BinaryCase& c, std::ostream* os) { *os << node_type_name(c.type); }

class BinaryNode : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(BinaryNode, MatchesReferenceWithBroadcast) {
  const BinaryCase& c = GetParam();
  PayloadBuilder b;
  const uint32_t a = b.input({2, 3, 4});
  const uint32_t v = b.input({4});
  const uint32_t out = b.output({2, 3, 4});
  b.binary(c.type, a, v, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats xa = sample(24), xv = sample(4, true, 2.0f);
  Floats want(24);
  for (size_t i = 0; i < 24; ++i) want[i] = c.ref(xa[i], xv[i % 4]);
  expect_near(run(*built->graph, {xa, xv})[0], want);
}

INSTANTIATE_TEST_SUITE_P(
    Types, BinaryNode,
    ::testing::Values(
        BinaryCase{NodeType::kAdd, std::plus<float>()},
        BinaryCase{NodeType::kSubtract, std::minus<float>()},
        BinaryCase{NodeType::kMultiply, std::multiplies<float>()},
        BinaryCase{NodeType::kDiv, std::divides<float>()},
        BinaryCase{NodeType::kMinimum, [](float x, float y) { return std::min(x, y); }},
        BinaryCase{NodeType::kMaximum, [](float x, float y) { return std::max(x, y); }}),
    [](const auto& param_info) { return std::string(node_type_name(param_info.param.type)); });

TEST(PReLU, ConstantSlopePerChannel) {
  PayloadBuilder b;
  const uint32_t in = b.input({1, 2, 2, 3});
  const uint32_t out = b.output({1, 2, 2, 3});
  const Floats slope = {0.1f, 0.2f, 0.3f};
  b.binary(NodeType::kPReLU, in, b.constant({3}, slope), out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(12);
  Floats want(12);
  for (size_t i = 0; i < 12; ++i) want[i] = x[i] > 0 ? x[i] : x[i] * slope[i % 3];
  expect_near(run(*built->graph, {x})[0], want);
}

TEST(Refusals, PReLUWithARuntimeSlope) {
  PayloadBuilder b;
  const uint32_t in = b.input({1, 2, 2, 3});
  const uint32_t slope = b.input({3});
  const uint32_t out = b.output({1, 2, 2, 3});
  b.binary(NodeType::kPReLU, in, slope, out);
  auto built = compile(b);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("slope must be a constant"), std::string::npos)
      << built.status().message();
}

// ---- Dense and convolution nodes -----------------------------------------------------

// Both ways a float FullyConnected runs: our packed_sgemm on the filter packed once
// (large filters), and XNNPACK (CompileOptions::packed_fc_min_filter); filters
// [N, K] and [K, N] (the transpose flag), with and without a bias.
TEST(FullyConnected, MatchesReference) {
  constexpr uint32_t kFilterKByN = 0x1;
  for (bool on_xnnpack : {false, true}) {
    for (bool k_by_n : {false, true}) {
      for (bool with_bias : {false, true}) {
        PayloadBuilder b;
        const uint32_t in = b.input({2, 3, 5});
        const uint32_t out = b.output({2, 3, 4});
        const Floats w = sample(20, false, 0.5f), bias = sample(4, false, 1.5f);
        Floats stored = w;  // as the payload holds it
        if (k_by_n) {
          for (size_t n = 0; n < 4; ++n)
            for (size_t k = 0; k < 5; ++k) stored[k * 4 + n] = w[n * 5 + k];
        }
        const uint32_t wid =
            b.constant(k_by_n ? std::vector<size_t>{5, 4} : std::vector<size_t>{4, 5}, stored);
        const uint32_t bid = with_bias ? b.constant({4}, bias) : kNoValue;
        b.fully_connected(in, wid, bid, out, k_by_n ? kFilterKByN : 0);
        CompileOptions options;
        options.packed_fc_min_filter = on_xnnpack ? 21 : 20;
        auto built = compile(b, options);
        ASSERT_TRUE(built.ok()) << built.status().to_string();
        ASSERT_EQ(built->graph->steps().size(), 1u);
        EXPECT_EQ(built->graph->steps()[0].on_xnnpack, on_xnnpack);
        EXPECT_EQ(built->graph->graph().values[wid].packed != nullptr, !on_xnnpack);
        const Floats x = sample(30);
        Floats want(24);
        for (size_t r = 0; r < 6; ++r) {
          for (size_t n = 0; n < 4; ++n) {
            float acc = with_bias ? bias[n] : 0.0f;
            for (size_t k = 0; k < 5; ++k) acc += x[r * 5 + k] * w[n * 5 + k];
            want[r * 4 + n] = acc;
          }
        }
        SCOPED_TRACE(::testing::Message() << "on_xnnpack=" << on_xnnpack << " k_by_n=" << k_by_n
                                          << " bias=" << with_bias);
        expect_near(run(*built->graph, {x})[0], want, 1e-4f);
      }
    }
  }
}

// NHWC convolution reference; filter [OC, KH, KW, GIC] (depthwise: [1, KH, KW, OC]).
Floats conv_reference(const Floats& x, std::array<size_t, 4> xd, const Floats& w, const Floats& b,
                      size_t kh, size_t kw, size_t stride, size_t pad, size_t groups, size_t oc,
                      bool depthwise) {
  const size_t h = xd[1], wd = xd[2], c = xd[3], gic = c / groups, goc = oc / groups;
  const size_t oh = (h + 2 * pad - kh) / stride + 1, ow = (wd + 2 * pad - kw) / stride + 1;
  Floats y(xd[0] * oh * ow * oc);
  for (size_t n = 0; n < xd[0]; ++n)
    for (size_t i = 0; i < oh; ++i)
      for (size_t j = 0; j < ow; ++j)
        for (size_t o = 0; o < oc; ++o) {
          const size_t g = o / goc;
          float acc = b[o];
          for (size_t p = 0; p < kh; ++p)
            for (size_t q = 0; q < kw; ++q) {
              const long yy = static_cast<long>(i * stride + p) - static_cast<long>(pad);
              const long xx = static_cast<long>(j * stride + q) - static_cast<long>(pad);
              if (yy < 0 || xx < 0 || yy >= static_cast<long>(h) || xx >= static_cast<long>(wd))
                continue;
              for (size_t ci = 0; ci < gic; ++ci) {
                const float xv = x[((n * h + yy) * wd + xx) * c + g * gic + ci];
                const float wv =
                    depthwise ? w[(p * kw + q) * oc + o] : w[((o * kh + p) * kw + q) * gic + ci];
                acc += xv * wv;
              }
            }
          y[((n * oh + i) * ow + j) * oc + o] = acc;
        }
  return y;
}

TEST(Conv2d, GroupedStridedPaddedMatchesReference) {
  PayloadBuilder b;
  const uint32_t in = b.input({1, 5, 5, 4});
  const uint32_t out = b.output({1, 3, 3, 6});
  const Floats w = sample(6 * 3 * 3 * 2, false, 0.2f), bias = sample(6, false, 0.9f);
  const uint32_t wid = b.constant({6, 3, 3, 2}, w);
  const uint32_t bid = b.constant({6}, bias);
  b.conv(NodeType::kConv2d, {1, 1, 1, 1, 3, 3, 2, 2, 1, 1, 2, 3, 2}, in, wid, bid, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(100);
  expect_near(run(*built->graph, {x})[0],
              conv_reference(x, {1, 5, 5, 4}, w, bias, 3, 3, 2, 1, 2, 6, false), 1e-4f);
}

TEST(DepthwiseConv2d, MatchesReference) {
  PayloadBuilder b;
  const uint32_t in = b.input({1, 4, 4, 3});
  const uint32_t out = b.output({1, 4, 4, 3});
  const Floats w = sample(27, false, 0.4f), bias = sample(3, false, 1.1f);
  const uint32_t wid = b.constant({1, 3, 3, 3}, w);
  const uint32_t bid = b.constant({3}, bias);
  b.conv(NodeType::kDepthwiseConv2d, {1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 3}, in, wid, bid, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(48);
  expect_near(run(*built->graph, {x})[0],
              conv_reference(x, {1, 4, 4, 3}, w, bias, 3, 3, 1, 1, 3, 3, true), 1e-4f);
}

TEST(Pooling, MaxAverageAndGlobalMatchReference) {
  PayloadBuilder b;
  const uint32_t in = b.input({1, 4, 4, 2});
  const uint32_t max_out = b.output({1, 2, 2, 2});
  const uint32_t avg_out = b.output({1, 2, 2, 2});
  const uint32_t gap_out = b.output({1, 1, 1, 2});
  b.pooling(NodeType::kMaxPooling2d, {0, 0, 0, 0, 2, 2, 2, 2}, in, max_out);
  b.pooling(NodeType::kAvgPooling2d, {0, 0, 0, 0, 2, 2, 2, 2}, in, avg_out);
  b.unary(NodeType::kGlobalAvgPooling2d, in, gap_out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(32);
  Floats mx(8), av(8), gap(2, 0);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 2; ++j)
      for (size_t c = 0; c < 2; ++c) {
        float m = -INFINITY, s = 0;
        for (size_t p = 0; p < 2; ++p)
          for (size_t q = 0; q < 2; ++q) {
            const float v = x[((2 * i + p) * 4 + 2 * j + q) * 2 + c];
            m = std::max(m, v);
            s += v;
          }
        mx[(i * 2 + j) * 2 + c] = m;
        av[(i * 2 + j) * 2 + c] = s / 4;
      }
  for (size_t k = 0; k < 32; ++k) gap[k % 2] += x[k] / 16;
  auto outs = run(*built->graph, {x});
  expect_near(outs[0], mx);
  expect_near(outs[1], av);
  expect_near(outs[2], gap);
}

// ---- Layout nodes ------------------------------------------------------------------

TEST(Layout, TransposeReshapeSliceConcatPad) {
  PayloadBuilder b;
  const uint32_t in = b.input({2, 3, 4});
  const uint32_t t = b.output({4, 2, 3});
  const uint32_t r = b.output({6, 4});
  const uint32_t s = b.output({1, 2, 2});
  const uint32_t c = b.output({2, 9, 4});
  const uint32_t p = b.output({2, 4, 6});
  b.transpose({2, 0, 1}, in, t);
  b.reshape({6, 4}, in, r);
  b.slice({1, 1, 2}, {1, 2, 2}, in, s);
  b.concat(1, {in, in, in}, c);
  b.pad({0, 1, 0}, {0, 0, 2}, 7.0f, in, p);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(24);
  auto at = [&](size_t i, size_t j, size_t k) { return x[(i * 3 + j) * 4 + k]; };
  Floats wt, ws, wc, wp;
  for (size_t k = 0; k < 4; ++k)
    for (size_t i = 0; i < 2; ++i)
      for (size_t j = 0; j < 3; ++j) wt.push_back(at(i, j, k));
  for (size_t j = 1; j < 3; ++j)
    for (size_t k = 2; k < 4; ++k) ws.push_back(at(1, j, k));
  for (size_t i = 0; i < 2; ++i)
    for (size_t rep = 0; rep < 3; ++rep)
      for (size_t j = 0; j < 3; ++j)
        for (size_t k = 0; k < 4; ++k) wc.push_back(at(i, j, k));
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 4; ++j)
      for (size_t k = 0; k < 6; ++k) wp.push_back(j >= 1 && k < 4 ? at(i, j - 1, k) : 7.0f);
  auto outs = run(*built->graph, {x});
  expect_near(outs[0], wt);
  expect_near(outs[1], x);
  expect_near(outs[2], ws);
  expect_near(outs[3], wc);
  expect_near(outs[4], wp);
}

TEST(Layout, TransposesThatDoNotMergeToTwoDims) {
  PayloadBuilder b;
  const uint32_t in = b.input({2, 3, 4, 5});
  const uint32_t out = b.output({3, 2, 5, 4});
  b.transpose({1, 0, 3, 2}, in, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(120);
  Floats want;
  for (size_t j = 0; j < 3; ++j)
    for (size_t i = 0; i < 2; ++i)
      for (size_t l = 0; l < 5; ++l)
        for (size_t k = 0; k < 4; ++k) want.push_back(x[((i * 3 + j) * 4 + k) * 5 + l]);
  expect_near(run(*built->graph, {x})[0], want);
}

TEST(Layout, ConcatenateTwoToFiveInputs) {
  for (size_t n = 2; n <= 5; ++n) {
    PayloadBuilder b;
    std::vector<uint32_t> ins;
    for (size_t i = 0; i < n; ++i) ins.push_back(b.input({2, i + 1}));
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) total += i + 1;
    const uint32_t out = b.output({2, total});
    b.concat(1, ins, out);
    auto built = compile(b);
    ASSERT_TRUE(built.ok()) << built.status().to_string();
    std::vector<Floats> xs;
    for (size_t i = 0; i < n; ++i) xs.push_back(sample(2 * (i + 1), false, static_cast<float>(i)));
    Floats want;
    for (size_t r = 0; r < 2; ++r)
      for (size_t i = 0; i < n; ++i)
        for (size_t c = 0; c <= i; ++c) want.push_back(xs[i][r * (i + 1) + c]);
    expect_near(run(*built->graph, xs)[0], want);
  }
}

TEST(ResizeBilinear, HalfPixelCentersLikePyTorch) {
  // align_corners=False: src = (dst + 0.5) * in / out - 0.5, clamped at 0.
  PayloadBuilder b;
  const uint32_t in = b.input({1, 3, 4, 2});
  const uint32_t out = b.output({1, 5, 7, 2});
  b.resize_bilinear(5, 7, in, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(24);
  auto coord = [](size_t dst, size_t in_size, size_t out_size, size_t& lo, size_t& hi, float& t) {
    float src = (static_cast<float>(dst) + 0.5f) * static_cast<float>(in_size) /
                    static_cast<float>(out_size) -
                0.5f;
    src = std::max(src, 0.0f);
    lo = std::min(static_cast<size_t>(src), in_size - 1);
    hi = std::min(lo + 1, in_size - 1);
    t = src - static_cast<float>(lo);
  };
  Floats want;
  for (size_t oy = 0; oy < 5; ++oy)
    for (size_t ox = 0; ox < 7; ++ox)
      for (size_t c = 0; c < 2; ++c) {
        size_t y0, y1, x0, x1;
        float ty, tx;
        coord(oy, 3, 5, y0, y1, ty);
        coord(ox, 4, 7, x0, x1, tx);
        auto at = [&](size_t y, size_t xx) { return x[(y * 4 + xx) * 2 + c]; };
        const float top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * tx;
        const float bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * tx;
        want.push_back(top + (bottom - top) * ty);
      }
  expect_near(run(*built->graph, {x})[0], want, 1e-5f);
}

TEST(ConvTranspose2d, StridedPaddedMatchesReference) {
  // in [1,3,3,2], filter [OC=3, 3, 3, IC=2], stride 2, padding 1: out 5x5.
  PayloadBuilder b;
  const uint32_t in = b.input({1, 3, 3, 2});
  const uint32_t out = b.output({1, 5, 5, 3});
  const Floats w = sample(3 * 3 * 3 * 2, false, 0.6f), bias = {0.1f, -0.2f, 0.3f};
  b.conv(NodeType::kConvTranspose2d, {1, 1, 1, 1, 3, 3, 2, 2, 1, 1, 2, 3, 1}, in,
         b.constant({3, 3, 3, 2}, w), b.constant({3}, bias), out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(18);
  Floats want(5 * 5 * 3);
  for (size_t oy = 0; oy < 5; ++oy)
    for (size_t ox = 0; ox < 5; ++ox)
      for (size_t o = 0; o < 3; ++o) want[(oy * 5 + ox) * 3 + o] = bias[o];
  for (size_t iy = 0; iy < 3; ++iy)
    for (size_t ix = 0; ix < 3; ++ix)
      for (size_t ky = 0; ky < 3; ++ky)
        for (size_t kx = 0; kx < 3; ++kx) {
          const long oy = static_cast<long>(iy * 2 + ky) - 1,
                     ox = static_cast<long>(ix * 2 + kx) - 1;
          if (oy < 0 || ox < 0 || oy >= 5 || ox >= 5) continue;
          for (size_t o = 0; o < 3; ++o)
            for (size_t i = 0; i < 2; ++i) {
              want[(static_cast<size_t>(oy) * 5 + static_cast<size_t>(ox)) * 3 + o] +=
                  x[(iy * 3 + ix) * 2 + i] * w[((o * 3 + ky) * 3 + kx) * 2 + i];
            }
        }
  expect_near(run(*built->graph, {x})[0], want, 1e-4f);
}

// ---- Matrix products -----------------------------------------------------------------

TEST(BatchMatrixMultiply, BroadcastBatchAndTransposedB) {
  PayloadBuilder b;
  const uint32_t a = b.input({2, 3, 4});
  const uint32_t m = b.input({1, 5, 4});  // [N, K], shared by both batches
  const uint32_t out = b.output({2, 3, 5});
  b.binary(NodeType::kBatchMatrixMultiply, a, m, out, /*flags=transpose b*/ 1);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats xa = sample(24), xm = sample(20, false, 0.8f);
  Floats want(30);
  for (size_t bt = 0; bt < 2; ++bt)
    for (size_t i = 0; i < 3; ++i)
      for (size_t j = 0; j < 5; ++j) {
        float acc = 0;
        for (size_t k = 0; k < 4; ++k) acc += xa[(bt * 3 + i) * 4 + k] * xm[j * 4 + k];
        want[(bt * 3 + i) * 5 + j] = acc;
      }
  expect_near(run(*built->graph, {xa, xm})[0], want, 1e-4f);
}

TEST(ScaledDotProductAttention, MatchesReferenceWithMask) {
  const size_t bh = 2, t = 3, s = 4, d = 2;
  PayloadBuilder b;
  const uint32_t q = b.input({bh, t, d});
  const uint32_t k = b.input({bh, s, d});
  const uint32_t v = b.input({bh, s, d});
  const uint32_t out = b.output({bh, t, d});
  const Floats scale = {0.7f, 0.7f}, mask = sample(t * s, false, 3.0f);
  const uint32_t sid = b.constant({d}, scale);
  const uint32_t mid = b.constant({t, s}, mask);
  b.attention(q, k, v, sid, mid, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats xq = sample(bh * t * d), xk = sample(bh * s * d, false, 1.0f),
               xv = sample(bh * s * d, false, 2.0f);
  Floats want(bh * t * d);
  for (size_t n = 0; n < bh; ++n)
    for (size_t i = 0; i < t; ++i) {
      Floats w(s);
      float sum = 0;
      for (size_t j = 0; j < s; ++j) {
        float dot = 0;
        for (size_t c = 0; c < d; ++c)
          dot += xq[(n * t + i) * d + c] * 0.7f * xk[(n * s + j) * d + c];
        w[j] = std::exp(dot + mask[i * s + j]);
        sum += w[j];
      }
      for (size_t c = 0; c < d; ++c) {
        float acc = 0;
        for (size_t j = 0; j < s; ++j) acc += w[j] / sum * xv[(n * s + j) * d + c];
        want[(n * t + i) * d + c] = acc;
      }
    }
  expect_near(run(*built->graph, {xq, xk, xv})[0], want, 1e-4f);
}

// ---- Plans ---------------------------------------------------------------------------

// NCHW input -> transpose (kernel) -> conv -> add -> transpose (kernel) -> output.
PayloadBuilder mixed_graph(Floats& w, Floats& bias) {
  PayloadBuilder b;
  const uint32_t in = b.input({1, 2, 3, 3});
  const uint32_t out = b.output({1, 2, 3, 3});
  const uint32_t nhwc = b.internal({1, 3, 3, 2});
  const uint32_t conv = b.internal({1, 3, 3, 2});
  const uint32_t sum = b.internal({1, 3, 3, 2});
  w = sample(2 * 1 * 1 * 2, false, 0.3f);
  bias = {0.5f, -0.5f};
  const uint32_t wid = b.constant({2, 1, 1, 2}, w);
  const uint32_t bid = b.constant({2}, bias);
  b.transpose({0, 2, 3, 1}, in, nhwc);
  b.conv(NodeType::kConv2d, {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 1}, nhwc, wid, bid, conv);
  b.binary(NodeType::kAdd, conv, nhwc, sum);
  b.set_output_range(0.0f, 6.0f);
  b.transpose({0, 3, 1, 2}, sum, out);
  return b;
}

TEST(Plan, ValuesNobodyReadsStillGetMemory) {
  // XNNPACK allocates nothing for an internal value no node reads, but still runs the
  // node writing it (a reshape asserted on the null buffer; found by the fuzzer).
  PayloadBuilder b;
  const uint32_t in = b.input({2, 3});
  const uint32_t out = b.output({2, 3});
  const uint32_t dead_reshape = b.internal({3, 2});
  const uint32_t dead_add = b.internal({2, 3});
  b.reshape({3, 2}, in, dead_reshape);
  b.binary(NodeType::kAdd, in, in, dead_add);
  b.unary(NodeType::kNegate, in, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(6);
  Floats want(6);
  for (size_t i = 0; i < 6; ++i) want[i] = -x[i];
  expect_near(run(*built->graph, {x})[0], want);
}

TEST(Plan, MaximalRunsAndNodeByNodeAgree) {
  Floats w, bias;
  PayloadBuilder runs_builder = mixed_graph(w, bias);
  auto runs = compile(runs_builder);
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  PayloadBuilder nodes_builder = mixed_graph(w, bias);
  auto nodes = compile(nodes_builder, {Partitioning::kNodeByNode, 1});
  ASSERT_TRUE(nodes.ok()) << nodes.status().to_string();
  EXPECT_EQ(runs->graph->steps().size(), 3u);   // transpose | conv+add | transpose
  EXPECT_EQ(nodes->graph->steps().size(), 4u);  // one step per node
  const Floats x = sample(18);
  Floats want(18);
  for (size_t c = 0; c < 2; ++c)
    for (size_t p = 0; p < 9; ++p) {
      float acc = bias[c] + x[c * 9 + p];
      for (size_t ci = 0; ci < 2; ++ci) acc += x[ci * 9 + p] * w[c * 2 + ci];
      want[c * 9 + p] = std::clamp(acc, 0.0f, 6.0f);
    }
  expect_near(run(*runs->graph, {x})[0], want, 1e-5f);
  expect_near(run(*nodes->graph, {x})[0], want, 1e-5f);
}

// FullyConnected [64, 64] x [64, 64]: 262144 multiply-adds; each Add between two of
// them: 4096. With the threshold between: one Add goes with the FullyConnected nodes
// (one threaded runtime); four make a stretch of their own on the calling thread
// (threaded | calling thread | threaded). Either computes what one runtime computes.
PayloadBuilder fc_adds_fc(const Floats& w, int adds) {
  PayloadBuilder b;
  const uint32_t in = b.input({64, 64});
  const uint32_t out = b.output({64, 64});
  const uint32_t wid = b.constant({64, 64}, w);
  uint32_t h = b.internal({64, 64});
  b.fully_connected(in, wid, kNoValue, h);
  for (int i = 0; i < adds; ++i) {
    const uint32_t next = b.internal({64, 64});
    b.binary(NodeType::kAdd, h, in, next);
    h = next;
  }
  b.fully_connected(h, wid, kNoValue, out);
  return b;
}

TEST(Plan, ThreadsOnlyForNodesWithEnoughWork) {
  const Floats w = sample(64 * 64, false, 0.05f);
  CompileOptions split_options, serial_options;
  // The FullyConnected nodes on XNNPACK: this plans XNNPACK's runs.
  split_options.packed_fc_min_filter = serial_options.packed_fc_min_filter = SIZE_MAX;
  split_options.parallel_min_work = 100000;
  serial_options.parallel_min_work = SIZE_MAX;
  for (int adds : {1, 4}) {
    PayloadBuilder split_builder = fc_adds_fc(w, adds), serial_builder = fc_adds_fc(w, adds);
    auto split = compile(split_builder, split_options);
    ASSERT_TRUE(split.ok()) << split.status().to_string();
    auto serial = compile(serial_builder, serial_options);
    ASSERT_TRUE(serial.ok()) << serial.status().to_string();
    const uint32_t fc[] = {0}, add[] = {1};
    EXPECT_EQ(run_work(split->graph->graph(), fc), 64u * 64u * 64u);
    EXPECT_EQ(run_work(split->graph->graph(), add), 64u * 64u);
    const auto& steps = split->graph->steps();
    if (adds == 1) {
      ASSERT_EQ(steps.size(), 1u);
      EXPECT_TRUE(steps[0].parallel);
    } else {
      ASSERT_EQ(steps.size(), 3u);
      EXPECT_TRUE(steps[0].parallel);
      EXPECT_FALSE(steps[1].parallel);
      EXPECT_EQ(steps[1].nodes.size(), 4u);
      EXPECT_TRUE(steps[2].parallel);
    }
    ASSERT_EQ(serial->graph->steps().size(), 1u);
    EXPECT_FALSE(serial->graph->steps()[0].parallel);
    const Floats x = sample(64 * 64);
    expect_near(run(*split->graph, {x})[0], run(*serial->graph, {x})[0], 1e-5f);
  }
}

// XNNPACK's libXNNPACK.so calls pthreadpool_parallelize_* by name: they must reach the
// project's pool (runtime/core/pthreadpool_abi.cc), not Debian's libpthreadpool.
TEST(Plan, XnnpackRunsItsLoopsOnTheProjectsPool) {
  if (kThreadSanitizer) GTEST_SKIP() << "XNNPACK runs on the caller under ThreadSanitizer";
  ThreadPool::global().set_threads(2);
  const Floats w = sample(64 * 64, false, 0.05f);
  CompileOptions options;
  options.packed_fc_min_filter = SIZE_MAX;
  options.parallel_min_work = 1;
  PayloadBuilder builder = fc_adds_fc(w, 1);
  auto built = compile(builder, options);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  ASSERT_TRUE(built->graph->steps()[0].parallel);
  const WorkPool::Counts before = ThreadPool::global().counts();
  run(*built->graph, {sample(64 * 64)});
  const WorkPool::Counts after = ThreadPool::global().counts();
  EXPECT_GT(after.shared + after.inline_runs, before.shared + before.inline_runs);
}

TEST(Replicas, ConcurrentRunsShareAtMostTheLimit) {
  Floats w, bias;
  PayloadBuilder b = mixed_graph(w, bias);
  auto built = compile(b, {Partitioning::kMaximalRuns, 2});
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(18);
  const Floats want = run(*built->graph, {x})[0];
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (run(*built->graph, {x})[0] != want) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_GE(built->graph->replicas(), 1u);
  EXPECT_LE(built->graph->replicas(), 2u);
}

// ---- Inputs at the end of a mapping ----------------------------------------------

TEST(Inputs, OverReadIsSafeOnlyWithinTheLastPage) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* region = static_cast<uint8_t*>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(region, MAP_FAILED);
  EXPECT_FALSE(over_read_is_safe(region + page - 64, 64));  // ends the page
  EXPECT_FALSE(over_read_is_safe(region + page - 70, 64));  // 6 bytes left
  EXPECT_TRUE(over_read_is_safe(region + page - 80, 64));   // 16 bytes left
  EXPECT_TRUE(over_read_is_safe(region, 64));
  EXPECT_FALSE(over_read_is_safe(region + page, page));  // a whole page, ending it
  munmap(region, 2 * page);
}

// The review's unconfirmed item: a constant XNNPACK reads in place (not packed) that
// ends a mapping would be over-read into the unmapped page after it. Parsing copies it.
TEST(Inputs, ConstantEndingAMappingIsCopied) {
  PayloadBuilder b;
  const uint32_t in = b.input({4});
  const uint32_t c = b.constant({4}, {1, 2, 3, 4});
  const uint32_t out = b.output({4});
  b.binary(NodeType::kAdd, in, c, out);
  const std::vector<uint8_t> payload = b.finish();
  auto first = parse_graph(payload, no_named_data);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  const auto* constant = static_cast<const uint8_t*>(first->values[c].data);
  const size_t end = static_cast<size_t>(constant - payload.data()) + 16;  // past the constant
  ASSERT_EQ(end % 16, 0u);

  // The payload placed so that the constant's last byte ends a page; the next is unmapped.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t span = (payload.size() + page - 1) / page * page + page;
  auto* region = static_cast<uint8_t*>(
      mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(region, MAP_FAILED);
  ASSERT_EQ(munmap(region + span, page), 0);
  ASSERT_EQ(payload.size(), end);  // the constant section comes last in a payload
  uint8_t* start = region + span - end;
  std::memcpy(start, payload.data(), end);
  auto placed = parse_graph({start, end}, no_named_data);
  ASSERT_TRUE(placed.ok()) << placed.status().to_string();
  EXPECT_NE(placed->values[c].data, region + span - 16);  // a padded copy
  auto graph = CompiledGraph::create(std::move(placed).value(), CompileOptions{});
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();
  float x[4] = {1, 1, 1, 1}, y[4] = {};
  void* ptrs[] = {x, y};
  ASSERT_TRUE((*graph)->run(ptrs).ok());
  EXPECT_EQ(y[3], 5.0f);
  munmap(region, span);
}

// ---- Refusals ------------------------------------------------------------------------

TEST(Refusals, ANodeNothingCanRunIsNamed) {
  PayloadBuilder b;
  const uint32_t in = b.input({4}, DataType::kInt32);
  const uint32_t out = b.output({4}, DataType::kInt32);
  b.unary(NodeType::kGelu, in, out);
  auto built = compile(b);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(built.status().message().find("Gelu"), std::string::npos) << built.status().message();
}

TEST(Refusals, DeclaredOutputDimsMustFollowFromTheInputs) {
  PayloadBuilder b;
  const uint32_t x = b.input({2, 3});
  const uint32_t y = b.input({2, 3});
  const uint32_t out = b.output({2, 4});
  b.binary(NodeType::kAdd, x, y, out);
  auto built = compile(b);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kInvalidProgram);
  EXPECT_NE(built.status().message().find("Add"), std::string::npos) << built.status().message();
}

TEST(Refusals, ConvFilterOfTheWrongShape) {
  PayloadBuilder b;
  const uint32_t in = b.input({1, 4, 4, 2});
  const uint32_t out = b.output({1, 4, 4, 3});
  const uint32_t w = b.constant({3, 3, 3, 3}, Floats(81, 0.1f));  // should be [3,3,3,2]
  b.conv(NodeType::kConv2d, {1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 2, 3, 1}, in, w, kNoValue, out);
  auto built = compile(b);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("filter dims"), std::string::npos)
      << built.status().message();
}

TEST(Refusals, DepthwiseConvWithSeveralInputChannelsPerGroup) {
  // XNNPACK's depthwise convolution reads one input channel per group: 3 groups of 2
  // would silently read the wrong channels.
  PayloadBuilder b;
  const uint32_t in = b.input({1, 4, 4, 6});
  const uint32_t out = b.output({1, 4, 4, 3});
  const uint32_t w = b.constant({1, 3, 3, 3}, Floats(27, 0.1f));
  b.conv(NodeType::kDepthwiseConv2d, {1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 2, 1, 3}, in, w, kNoValue, out);
  auto built = compile(b);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("one input channel per group"), std::string::npos)
      << built.status().message();
}

TEST(Refusals, AValueReadBeforeWrittenAndAnOutputNeverWritten) {
  PayloadBuilder read_early;
  const uint32_t in = read_early.input({4});
  const uint32_t out = read_early.output({4});
  const uint32_t tmp = read_early.internal({4});
  read_early.binary(NodeType::kAdd, in, tmp, out);
  auto a = compile(read_early);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("before any node writes it"), std::string::npos);

  PayloadBuilder unwritten;
  unwritten.input({4});
  unwritten.output({4});
  auto b = compile(unwritten);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("never written"), std::string::npos);
}

// H1 of the security review: a Copy node from an 8-bit input to a 32-bit "quantized"
// output read 4 bytes per element of a 1-byte-per-element input, returning daemon heap.
TEST(Refusals, CopyBetweenDataTypesOfDifferentWidths) {
  PayloadBuilder b;
  PayloadBuilder::Quant q;
  const uint32_t in = b.quantized_input({64}, DataType::kQInt8, q);
  const uint32_t out = b.quantized_output({64}, DataType::kQInt32, q);
  b.unary(NodeType::kCopy, in, out);
  auto built = compile(b);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kInvalidProgram);
  EXPECT_NE(built.status().message().find("inputs and output must have one data type"),
            std::string::npos)
      << built.status().message();
}

// H7: one value with id 2^22 - 1 sized the value table at 384 MiB for a tiny payload.
TEST(Refusals, ValueIdsAreBoundedByTheValuesDeclared) {
  PayloadBuilder b;
  b.value(DataType::kFp32, {4}, 0, 0, 0, (1u << 22) - 1);
  auto built = compile(b);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("too large for a graph of 1 values"), std::string::npos)
      << built.status().message();
}

// H5: an attention node whose score matrix cannot exist (2^20 x 2^20 floats) is
// refused when planned, not met with bad_alloc at run time.
TEST(Refusals, AttentionScoresAboveTheLimit) {
  PayloadBuilder b;
  const size_t t = size_t{1} << 20;
  const uint32_t q = b.input({1, t, 1});
  const uint32_t k = b.input({1, t, 1});
  const uint32_t v = b.input({1, t, 1});
  const uint32_t scale = b.constant({1}, {1.0f});
  const uint32_t out = b.output({1, t, 1});
  b.attention(q, k, v, scale, kNoValue, out);
  auto built = compile(b);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("attention scores one node may hold"), std::string::npos)
      << built.status().message();
}

// ---- Dynamic dims --------------------------------------------------------------

TEST(DynamicDims, ReshapeInfersTheDimLeftZero) {
  PayloadBuilder b;
  const uint32_t in = b.input({2, 3, 4});
  const uint32_t out = b.output({6, 4});
  b.reshape({0, 4}, in, out);
  auto built = compile(b);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const Floats x = sample(24);
  expect_near(run(*built->graph, {x})[0], x);
}

TEST(DynamicDims, ReshapeRefusesTwoInferredDimsAndAWrongCount) {
  for (std::vector<uint32_t> shape : {std::vector<uint32_t>{0, 0}, {5, 4}, {0, 5}}) {
    PayloadBuilder b;
    const uint32_t in = b.input({2, 3, 4});
    const uint32_t out = b.output({6, 4});
    b.reshape(shape, in, out);
    auto built = compile(b);
    ASSERT_FALSE(built.ok());
    EXPECT_EQ(built.status().code(), StatusCode::kInvalidProgram) << built.status().to_string();
  }
}

// in [rows, 3] -> fully connected (5 outputs) -> reshape [0, 5] -> out [rows, 5]: the
// rows are the method's dynamic dim, declared at its upper bound 4.
Built dynamic_rows_graph(CompileOptions options = {}) {
  PayloadBuilder b;
  const uint32_t in = b.input({4, 3});
  const uint32_t out = b.output({4, 5});
  const uint32_t w = b.constant({5, 3}, sample(15, false, 1.0f));
  const uint32_t h = b.internal({4, 5});
  b.fully_connected(in, w, kNoValue, h);
  b.reshape({0, 5}, h, out);
  auto built = compile(b, options);
  EXPECT_TRUE(built.ok()) << built.status().to_string();
  return std::move(built).value();
}

TEST(DynamicDims, ASmallerInputRunsAGraphCompiledForIt) {
  Built built = dynamic_rows_graph();
  auto shaped = built.graph->for_input_dims({{{2, 3}}});
  ASSERT_TRUE(shaped.ok()) << shaped.status().to_string();
  const Graph& g = (*shaped)->graph();
  EXPECT_EQ(g.values[g.externals[1]].dims, (std::vector<size_t>{2, 5}));
  const Floats x = sample(6), w = sample(15, false, 1.0f);
  Floats want(10);
  for (size_t r = 0; r < 2; ++r)
    for (size_t n = 0; n < 5; ++n)
      for (size_t k = 0; k < 3; ++k) want[r * 5 + n] += x[r * 3 + k] * w[n * 3 + k];
  expect_near(run(**shaped, {x})[0], want);
  // The same dims again: the compiled graph is reused.
  auto again = built.graph->for_input_dims({{{2, 3}}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), shaped->get());
}

// A packed filter is packed once per program: every input shape's graph runs on the
// same packing, and XNNPACK's replicas hold no copy of it (nor count it).
TEST(FullyConnected, FilterPackedOnceForEveryShape) {
  const uint64_t before = replica_stats().weight_bytes, kernel_before = kernel_weight_bytes();
  CompileOptions packed;
  packed.packed_fc_min_filter = 15;  // the filter's size: packed
  Built built = dynamic_rows_graph(packed);
  EXPECT_EQ(replica_stats().weight_bytes, before);
  const Graph& g = built.graph->graph();
  const uint32_t filter = g.nodes[0].inputs[1];
  ASSERT_NE(g.values[filter].packed, nullptr);
  const uint64_t packed_bytes = g.values[filter].packed->bytes();
  EXPECT_GE(packed_bytes, 15 * sizeof(float));
  EXPECT_EQ(kernel_weight_bytes(), kernel_before + packed_bytes);
  auto shaped = built.graph->for_input_dims({{{2, 3}}});
  ASSERT_TRUE(shaped.ok()) << shaped.status().to_string();
  EXPECT_EQ((*shaped)->graph().values[filter].packed, g.values[filter].packed);
  EXPECT_EQ(kernel_weight_bytes(), kernel_before + packed_bytes);

  CompileOptions xnnpack;
  xnnpack.packed_fc_min_filter = 16;  // one more than the filter has
  Built copied = dynamic_rows_graph(xnnpack);
  EXPECT_EQ(copied.graph->graph().values[filter].packed, nullptr);
  EXPECT_EQ(replica_stats().weight_bytes, before + 15 * sizeof(float));
}

TEST(DynamicDims, DimsAboveTheDeclaredOnesAreRefused) {
  Built built = dynamic_rows_graph();
  for (std::vector<size_t> dims : {std::vector<size_t>{5, 3}, {2, 4}, {2, 3, 1}}) {
    auto shaped = built.graph->for_input_dims({{dims}});
    ASSERT_FALSE(shaped.ok());
    EXPECT_EQ(shaped.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(shaped.status().message().find("above the [4,3]"), std::string::npos)
        << shaped.status().to_string();
  }
}

// XNNPACK asserts on a null buffer and a transposed convolution's output size wraps
// around on an empty input, so no dim may be 0 at run time, inferred ones included.
TEST(DynamicDims, EmptyDimsAreRefusedNotRun) {
  Built rows = dynamic_rows_graph();
  for (std::vector<size_t> dims : {std::vector<size_t>{0, 3}, {2, 0}}) {
    auto shaped = rows.graph->for_input_dims({{dims}});
    ASSERT_FALSE(shaped.ok());
    EXPECT_EQ(shaped.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(shaped.status().message().find("empty"), std::string::npos)
        << shaped.status().to_string();
  }
  for (NodeType type : {NodeType::kConv2d, NodeType::kConvTranspose2d}) {
    PayloadBuilder b;
    const uint32_t in = b.input({2, 4, 4, 1});
    const bool up = type == NodeType::kConvTranspose2d;
    const uint32_t out =
        b.output(up ? std::vector<size_t>{2, 5, 5, 1} : std::vector<size_t>{2, 3, 3, 1});
    const uint32_t w = b.constant({1, 2, 2, 1}, sample(4, false, 1.0f));
    b.conv(type, {0, 0, 0, 0, 2, 2, 1, 1, 1, 1, 1, 1, 1}, in, w, kNoValue, out);
    auto built = compile(b);
    ASSERT_TRUE(built.ok()) << built.status().to_string();
    for (std::vector<size_t> dims : {std::vector<size_t>{0, 4, 4, 1}, {2, 0, 4, 1}}) {
      auto shaped = built->graph->for_input_dims({{dims}});
      ASSERT_FALSE(shaped.ok()) << dims[0] << "x" << dims[1];
      EXPECT_NE(shaped.status().message().find("empty"), std::string::npos)
          << shaped.status().to_string();
    }
  }
}

TEST(DynamicDims, TheLeastRecentlyUsedShapeIsDroppedBeyondTheLimit) {
  CompileOptions options;
  options.max_shapes = 2;
  Built built = dynamic_rows_graph(options);
  auto shaped = [&](size_t rows) {
    auto r = built.graph->for_input_dims({{{rows, 3}}});
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? std::weak_ptr<const CompiledGraph>(*r) : std::weak_ptr<const CompiledGraph>();
  };
  auto one = shaped(1);
  auto two = shaped(2);
  EXPECT_EQ(shaped(1).lock(), one.lock());  // 1 is now more recent than 2
  auto three = shaped(3);                   // drops 2, the least recently used
  EXPECT_TRUE(two.expired());
  EXPECT_FALSE(one.expired());
  EXPECT_FALSE(three.expired());
  // A graph a run still holds stays valid when dropped.
  auto held = one.lock();
  shaped(2);
  shaped(4);
  EXPECT_TRUE(one.expired() == false && held != nullptr);
  EXPECT_EQ(run(*held, {sample(3)})[0].size(), 5u);
}

}  // namespace
}  // namespace et::xnn
