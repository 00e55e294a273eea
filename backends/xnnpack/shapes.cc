#include "backends/xnnpack/shapes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace et::xnn {
namespace {

constexpr size_t kMaxAttentionScores = size_t{1} << 28;  // 1 GiB of floats

constexpr uint32_t kTransposeB = 0x1;  // FullyConnected filter [K, N]; BMM b [..., N, K]
constexpr uint32_t kKeepDims = 0x40;
constexpr uint32_t kResizeFlags = 0x4 | 0x8;  // legacy mode, align corners

using Dims = std::vector<size_t>;

class NodeChecker {
 public:
  // With `dims`, infers: reads every value's dims from it and writes the node's
  // outputs' dims there. Without, checks the declared output dims.
  NodeChecker(const Graph& graph, const GraphNode& node, std::vector<Dims>* dims = nullptr)
      : graph_(graph), node_(node), dims_(dims) {}

  Status check() {
    ET_RETURN_IF_ERROR(check_flags());
    switch (node_.type) {
      case NodeType::kAdd:
      case NodeType::kDiv:
      case NodeType::kMinimum:
      case NodeType::kMaximum:
      case NodeType::kMultiply:
      case NodeType::kSubtract: {
        Dims out;
        if (!broadcast_dims(in(0), in(1), out)) {
          return fail(fmt::format("inputs [{}] and [{}] do not broadcast", fmt::join(in(0), ","),
                                  fmt::join(in(1), ",")));
        }
        return expect_output(out);
      }
      case NodeType::kPReLU:
        ET_RETURN_IF_ERROR(rank(0, 4));
        if (in(1) != Dims{in(0).back()} || !value(node_.inputs[1]).data) {
          return fail("slope must be a constant with one value per channel");
        }
        return expect_output(in(0));
      case NodeType::kFullyConnected:
        return check_fully_connected();
      case NodeType::kConv2d:
      case NodeType::kDepthwiseConv2d:
      case NodeType::kConvTranspose2d:
        return check_conv();
      case NodeType::kAvgPooling2d:
      case NodeType::kMaxPooling2d:
      case NodeType::kArgMaxPooling2d:
        return check_pooling();
      case NodeType::kGlobalAvgPooling2d: {
        ET_RETURN_IF_ERROR(rank(0, 4));
        const Dims& x = in(0);
        return expect_output({x[0], 1, 1, x[3]});
      }
      case NodeType::kStaticResizeBilinear2D: {
        ET_RETURN_IF_ERROR(rank(0, 4));
        const Dims& x = in(0);
        if (node_.params[0] == 0 || node_.params[1] == 0) return fail("resize to an empty size");
        return expect_output({x[0], node_.params[0], node_.params[1], x[3]});
      }
      case NodeType::kStaticConstantPad: {
        const Dims& x = in(0);
        if (node_.list.size() != x.size() || node_.list2.size() != x.size()) {
          return fail("needs one pre and one post padding per dim");
        }
        Dims out = x;
        for (size_t d = 0; d < x.size(); ++d) out[d] += node_.list[d] + node_.list2[d];
        return expect_output(out);
      }
      case NodeType::kStaticReshape:
        return check_reshape();
      case NodeType::kStaticTranspose:
        return check_transpose();
      case NodeType::kStaticSlice:
        return check_slice();
      case NodeType::kConcatenate2:
      case NodeType::kConcatenate3:
      case NodeType::kConcatenate4:
      case NodeType::kConcatenate5:
        return check_concat();
      case NodeType::kBatchMatrixMultiply:
        return check_bmm();
      case NodeType::kScaledDotProductAttention:
        return check_attention();
      case NodeType::kConvert:
        return expect_output(in(0), /*same_type=*/false);
      case NodeType::kCopy:
        // Our kernel moves bytes: a narrower input would be read past its end.
        ET_RETURN_IF_ERROR(check_layout_types());
        return expect_output(in(0));
      default:  // elementwise unary nodes
        return expect_output(in(0));
    }
  }

 private:
  const GraphValue& value(uint32_t id) const { return graph_.values[id]; }
  const Dims& in(size_t i) const {
    return dims_ != nullptr ? (*dims_)[node_.inputs[i]] : value(node_.inputs[i]).dims;
  }
  static size_t count(const Dims& dims) {
    size_t n = 1;
    for (size_t d : dims) n *= d;
    return n;
  }

  Status fail(std::string message) const {
    return invalid_program(fmt::format("XNNPACK {} (debug handle {}): {}",
                                       node_type_name(node_.type), node_.debug_handle, message));
  }

  Status check_flags() const {
    uint32_t allowed = 0;
    switch (node_.type) {
      case NodeType::kFullyConnected:
      case NodeType::kBatchMatrixMultiply:
        allowed = kTransposeB;
        break;
      case NodeType::kAvgPooling2d:
      case NodeType::kMaxPooling2d:
      case NodeType::kGlobalAvgPooling2d:
        allowed = kKeepDims;
        break;
      case NodeType::kStaticResizeBilinear2D:
        allowed = kResizeFlags;
        break;
      default:
        break;
    }
    if (node_.flags & ~allowed) {
      return not_supported(
          fmt::format("XNNPACK {} (debug handle {}): flags {:#x} are not supported",
                      node_type_name(node_.type), node_.debug_handle, node_.flags & ~allowed));
    }
    return Status();
  }

  Status rank(size_t input, size_t want) const {
    if (in(input).size() != want) {
      return fail(fmt::format("input {} has rank {}, needs {}", input, in(input).size(), want));
    }
    return Status();
  }

  Status expect_output(const Dims& dims, bool same_type = true, size_t output = 0) const {
    const GraphValue& out = value(node_.outputs[output]);
    if (dims_ != nullptr) {
      (*dims_)[node_.outputs[output]] = dims;
    } else if (out.dims != dims) {
      return fail(fmt::format("output dims [{}], the inputs give [{}]", fmt::join(out.dims, ","),
                              fmt::join(dims, ",")));
    }
    if (same_type && out.dtype != value(node_.inputs[0]).dtype && !is_quantized(out.dtype)) {
      return fail(fmt::format("output is {}, input {}", data_type_name(out.dtype),
                              data_type_name(value(node_.inputs[0]).dtype)));
    }
    return Status();
  }

  static bool is_quantized(DataType t) {
    return t != DataType::kFp32 && t != DataType::kFp16 && t != DataType::kInt32 &&
           t != DataType::kBf16;
  }

  // The new shape may leave one dim 0: inferred from the input's element count (the
  // exporter writes the method's dynamic dims so).
  Status check_reshape() const {
    const GraphValue& x = value(node_.inputs[0]);
    const GraphValue& out = value(node_.outputs[0]);
    if (x.dtype != out.dtype) {
      return fail(fmt::format("input is {}, output {}", data_type_name(x.dtype),
                              data_type_name(out.dtype)));
    }
    const size_t numel = count(in(0));
    Dims shape = node_.list;
    size_t known = 1, inferred = shape.size();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] != 0) {
        known *= shape[d];
      } else if (inferred == shape.size()) {
        inferred = d;
      } else {
        return fail(fmt::format("new shape [{}] leaves more than one dim to infer",
                                fmt::join(node_.list, ",")));
      }
    }
    if (inferred < shape.size()) {
      if (known == 0 || numel % known != 0) {
        return fail(fmt::format("cannot infer a dim of [{}] from {} elements",
                                fmt::join(node_.list, ","), numel));
      }
      shape[inferred] = numel / known;
    } else if (known != numel) {
      return fail(fmt::format("new shape [{}] holds {} elements, the input [{}] {}",
                              fmt::join(node_.list, ","), known, fmt::join(in(0), ","), numel));
    }
    return expect_output(shape);
  }

  Status check_fully_connected() const {
    const Dims& x = in(0);
    const Dims& w = in(1);
    if (x.empty() || w.size() != 2) return fail("needs an input of rank >= 1 and a 2D filter");
    const bool transposed = node_.flags & kTransposeB;
    const size_t k = transposed ? w[0] : w[1], n = transposed ? w[1] : w[0];
    if (x.back() != k) {
      return fail(fmt::format("input has {} features, the filter {}", x.back(), k));
    }
    if (node_.inputs[2] != kNoValue && value(node_.inputs[2]).numel != n) {
      return fail(
          fmt::format("bias has {} values for {} outputs", value(node_.inputs[2]).numel, n));
    }
    if (!value(node_.inputs[1]).data) return fail("the filter must be a constant");
    Dims out = x;
    out.back() = n;
    // A dynamically quantized (qdint8) input gives a float output.
    return expect_output(out, /*same_type=*/value(node_.inputs[0]).dtype != DataType::kQdInt8);
  }

  Status check_conv() const {
    ET_RETURN_IF_ERROR(rank(0, 4));
    ET_RETURN_IF_ERROR(rank(1, 4));
    const auto& p = node_.params;
    const size_t pad_t = p[0], pad_r = p[1], pad_b = p[2], pad_l = p[3];
    const size_t kh = p[4], kw = p[5], sh = p[6], sw = p[7], dh = p[8], dw = p[9];
    const size_t gic = p[10], goc = p[11], groups = p[12], adj_h = p[13], adj_w = p[14];
    if (kh == 0 || kw == 0 || sh == 0 || sw == 0 || dh == 0 || dw == 0 || groups == 0 || gic == 0 ||
        goc == 0) {
      return fail("kernel, stride, dilation, groups and channels must be positive");
    }
    const Dims& x = in(0);
    const Dims& w = in(1);
    if (x[3] != groups * gic) {
      return fail(
          fmt::format("input has {} channels, groups x group inputs = {}", x[3], groups * gic));
    }
    const bool depthwise = node_.type == NodeType::kDepthwiseConv2d;
    if (depthwise && gic != 1) {
      return fail(
          fmt::format("a depthwise convolution reads one input channel per group, not {}", gic));
    }
    const Dims want_filter =
        depthwise ? Dims{1, kh, kw, groups * goc} : Dims{groups * goc, kh, kw, gic};
    if (w != want_filter) {
      return fail(fmt::format("filter dims [{}], expected [{}]", fmt::join(w, ","),
                              fmt::join(want_filter, ",")));
    }
    if (!value(node_.inputs[1]).data) return fail("the filter must be a constant");
    if (node_.inputs[2] != kNoValue &&
        (value(node_.inputs[2]).numel != groups * goc || !value(node_.inputs[2]).data)) {
      return fail("bias must be a constant with one value per output channel");
    }
    const size_t eff_h = dh * (kh - 1) + 1, eff_w = dw * (kw - 1) + 1;
    size_t oh, ow;
    if (node_.type == NodeType::kConvTranspose2d) {
      const size_t full_h = sh * (x[1] - 1) + adj_h + eff_h,
                   full_w = sw * (x[2] - 1) + adj_w + eff_w;
      if (full_h <= pad_t + pad_b || full_w <= pad_l + pad_r)
        return fail("padding eats the output");
      oh = full_h - pad_t - pad_b;
      ow = full_w - pad_l - pad_r;
    } else {
      const size_t ph = x[1] + pad_t + pad_b, pw = x[2] + pad_l + pad_r;
      if (ph < eff_h || pw < eff_w) return fail("the kernel is larger than the padded input");
      oh = (ph - eff_h) / sh + 1;
      ow = (pw - eff_w) / sw + 1;
    }
    return expect_output({x[0], oh, ow, groups * goc});
  }

  Status check_pooling() const {
    ET_RETURN_IF_ERROR(rank(0, 4));
    const auto& p = node_.params;
    const bool argmax = node_.type == NodeType::kArgMaxPooling2d;
    const size_t ph = p[4], pw = p[5];
    const size_t sh = argmax ? ph : p[6], sw = argmax ? pw : p[7];
    const size_t dh = argmax || p[8] == 0 ? 1 : p[8], dw = argmax || p[9] == 0 ? 1 : p[9];
    if (ph == 0 || pw == 0 || sh == 0 || sw == 0)
      return fail("pool size and stride must be positive");
    const Dims& x = in(0);
    const size_t eff_h = dh * (ph - 1) + 1, eff_w = dw * (pw - 1) + 1;
    const size_t padded_h = x[1] + p[0] + p[2], padded_w = x[2] + p[1] + p[3];
    if (padded_h < eff_h || padded_w < eff_w)
      return fail("the pool is larger than the padded input");
    const Dims out = {x[0], (padded_h - eff_h) / sh + 1, (padded_w - eff_w) / sw + 1, x[3]};
    if (argmax) ET_RETURN_IF_ERROR(expect_output(out, /*same_type=*/false, 1));
    return expect_output(out);
  }

  Status check_layout_types() const {
    const DataType t = value(node_.outputs[0]).dtype;
    for (uint32_t id : node_.inputs) {
      if (value(id).dtype != t) return fail("inputs and output must have one data type");
    }
    return Status();
  }

  Status check_transpose() const {
    const Dims& x = in(0);
    Dims sorted = node_.list;
    std::sort(sorted.begin(), sorted.end());
    for (size_t d = 0; d < sorted.size(); ++d) {
      if (sorted[d] != d) sorted.clear();
    }
    if (node_.list.size() != x.size() || sorted.size() != x.size()) {
      return fail(fmt::format("perm [{}] is not a permutation of {} dims",
                              fmt::join(node_.list, ","), x.size()));
    }
    Dims out(x.size());
    for (size_t d = 0; d < x.size(); ++d) out[d] = x[node_.list[d]];
    ET_RETURN_IF_ERROR(check_layout_types());
    return expect_output(out);
  }

  Status check_slice() const {
    const Dims& x = in(0);
    if (node_.list.size() != x.size() || node_.list2.size() != x.size()) {
      return fail("needs one offset and one size per dim");
    }
    Dims out(x.size());
    for (size_t d = 0; d < x.size(); ++d) {
      const size_t offset = node_.list[d];
      const size_t size = node_.list2[d] == 0 && offset < x[d] ? x[d] - offset : node_.list2[d];
      if (offset >= x[d] || size == 0 || size > x[d] - offset) {
        return fail(fmt::format("slice [{}, +{}) of dim {} (size {})", offset, size, d, x[d]));
      }
      out[d] = size;
    }
    ET_RETURN_IF_ERROR(check_layout_types());
    return expect_output(out);
  }

  Status check_concat() const {
    const Dims& first = in(0);
    const size_t axis = node_.params[0];
    if (axis >= first.size()) return fail(fmt::format("axis {} of rank {}", axis, first.size()));
    Dims out = first;
    out[axis] = 0;
    for (size_t i = 0; i < node_.inputs.size(); ++i) {
      const Dims& x = in(i);
      if (x.size() != first.size()) return fail("inputs differ in rank");
      for (size_t d = 0; d < x.size(); ++d) {
        if (d != axis && x[d] != first[d]) return fail("inputs differ outside the axis");
      }
      out[axis] += x[axis];
    }
    ET_RETURN_IF_ERROR(check_layout_types());
    return expect_output(out);
  }

  Status check_bmm() const {
    const Dims& a = in(0);
    const Dims& b = in(1);
    if (a.size() < 2 || b.size() < 2) return fail("both inputs need rank >= 2");
    const bool tb = node_.flags & kTransposeB;
    const size_t m = a[a.size() - 2], k = a.back();
    const size_t kb = tb ? b.back() : b[b.size() - 2], n = tb ? b[b.size() - 2] : b.back();
    if (k != kb) return fail(fmt::format("inner dims {} and {} differ", k, kb));
    Dims batch;
    if (!broadcast_dims({a.data(), a.size() - 2}, {b.data(), b.size() - 2}, batch)) {
      return fail("batch dims do not broadcast");
    }
    batch.push_back(m);
    batch.push_back(n);
    ET_RETURN_IF_ERROR(check_float());
    return expect_output(batch);
  }

  Status check_attention() const {
    const Dims& q = in(0);
    const Dims& k = in(1);
    const Dims& v = in(2);
    if (q.size() < 2 || k.size() != q.size() || v.size() != q.size()) {
      return fail("query, key and value need one rank >= 2");
    }
    const size_t r = q.size();
    for (size_t d = 0; d + 2 < r; ++d) {
      if (k[d] != q[d] || v[d] != q[d]) return fail("batch dims differ");
    }
    if (k[r - 1] != q[r - 1] || v[r - 2] != k[r - 2]) return fail("query/key/value dims disagree");
    if (node_.inputs[3] == kNoValue || value(node_.inputs[3]).numel != q[r - 1]) {
      return fail("scale must have one value per channel");
    }
    if (node_.inputs[4] != kNoValue && in(4) != Dims{q[r - 2], k[r - 2]}) {
      return fail("mask must be [query tokens, key tokens]");
    }
    // Our kernel holds one [query tokens, key tokens] score matrix at a time.
    size_t scores = 0;
    if (__builtin_mul_overflow(q[r - 2], k[r - 2], &scores) || scores > kMaxAttentionScores) {
      return fail(
          fmt::format("{} query x {} key tokens is above the {} attention scores one "
                      "node may hold; export without delegating this node",
                      q[r - 2], k[r - 2], kMaxAttentionScores));
    }
    Dims out = q;
    out[r - 1] = v[r - 1];
    ET_RETURN_IF_ERROR(check_float());
    return expect_output(out);
  }

  Status check_float() const {
    for (uint32_t id : node_.inputs) {
      if (id != kNoValue && value(id).dtype != DataType::kFp32) return fail("needs fp32 inputs");
    }
    if (value(node_.outputs[0]).dtype != DataType::kFp32) return fail("needs an fp32 output");
    return Status();
  }

  const Graph& graph_;
  const GraphNode& node_;
  std::vector<Dims>* dims_;
};

Status check_inputs_present(const GraphNode& node) {
  const bool has_bias = node.type == NodeType::kFullyConnected || node.type == NodeType::kConv2d ||
                        node.type == NodeType::kDepthwiseConv2d ||
                        node.type == NodeType::kConvTranspose2d;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const bool optional =
        (has_bias && i == 2) || (node.type == NodeType::kScaledDotProductAttention && i == 4);
    if (node.inputs[i] == kNoValue && !optional) {
      return invalid_program(fmt::format("XNNPACK {} (debug handle {}): input {} is missing",
                                         node_type_name(node.type), node.debug_handle, i));
    }
  }
  return Status();
}

}  // namespace

bool broadcast_dims(std::span<const size_t> a, std::span<const size_t> b,
                    std::vector<size_t>& out) {
  const size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const size_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const size_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return false;
    out[rank - 1 - i] = std::max(da, db);
  }
  return true;
}

Status check_node(const Graph& graph, const GraphNode& node) {
  ET_RETURN_IF_ERROR(check_inputs_present(node));
  return NodeChecker(graph, node).check();
}

Status infer_dims(const Graph& graph, std::vector<std::vector<size_t>>& dims) {
  if (dims.size() != graph.values.size()) {
    return invalid_argument("infer_dims: one dims entry per value is needed");
  }
  for (const GraphNode& node : graph.nodes) {
    ET_RETURN_IF_ERROR(check_inputs_present(node));
    ET_RETURN_IF_ERROR(NodeChecker(graph, node, &dims).check());
    // No node may see an empty value: XNNPACK asserts on one, and a transposed
    // convolution's output size would wrap around.
    for (uint32_t id : node.outputs) {
      if (id < dims.size() &&
          std::find(dims[id].begin(), dims[id].end(), size_t{0}) != dims[id].end()) {
        return invalid_argument(fmt::format(
            "XNNPACK node {} would make value {} empty ([{}]): XNNPACK cannot run an empty tensor",
            node_type_name(node.type), id, fmt::join(dims[id], ",")));
      }
    }
  }
  return Status();
}

}  // namespace et::xnn
