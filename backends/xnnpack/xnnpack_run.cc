#include "backends/xnnpack/xnnpack_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "backends/xnnpack/kernel_nodes.h"

namespace et::xnn {
namespace {

constexpr uint32_t kKeepDims = 0x40;  // newer XNNPACK's flag; 4D in and out needs none

std::string_view status_name(xnn_status s) {
  switch (s) {
    case xnn_status_success:
      return "success";
    case xnn_status_uninitialized:
      return "uninitialized";
    case xnn_status_invalid_parameter:
      return "invalid parameter";
    case xnn_status_invalid_state:
      return "invalid state";
    case xnn_status_unsupported_parameter:
      return "unsupported parameter";
    case xnn_status_unsupported_hardware:
      return "unsupported hardware";
    case xnn_status_out_of_memory:
      return "out of memory";
  }
  return "unknown error";
}

bool xnn_type(DataType t, xnn_datatype& out) {
  switch (t) {
    case DataType::kFp32:
      out = xnn_datatype_fp32;
      return true;
    case DataType::kFp16:
      out = xnn_datatype_fp16;
      return true;
    case DataType::kQInt8:
      out = xnn_datatype_qint8;
      return true;
    case DataType::kQUInt8:
      out = xnn_datatype_quint8;
      return true;
    case DataType::kQInt32:
      out = xnn_datatype_qint32;
      return true;
    case DataType::kQcInt8:
      out = xnn_datatype_qcint8;
      return true;
    case DataType::kQcInt32:
      out = xnn_datatype_qcint32;
      return true;
    default:
      return false;
  }
}

// Whether the node's own XNNPACK definition takes an output range.
bool takes_range(NodeType t) {
  switch (t) {
    case NodeType::kAdd:
    case NodeType::kSubtract:
    case NodeType::kMultiply:
    case NodeType::kDiv:
    case NodeType::kFullyConnected:
    case NodeType::kConv2d:
    case NodeType::kDepthwiseConv2d:
    case NodeType::kConvTranspose2d:
    case NodeType::kAvgPooling2d:
    case NodeType::kMaxPooling2d:
    case NodeType::kGlobalAvgPooling2d:
    case NodeType::kClamp:
      return true;
    default:
      return false;
  }
}

class SubgraphBuilder {
 public:
  SubgraphBuilder(const Graph& graph, xnn_subgraph_t subgraph, std::span<const uint32_t> boundary,
                  std::span<const uint32_t> nodes)
      : graph_(graph), subgraph_(subgraph), ids_(graph.values.size(), XNN_INVALID_VALUE_ID) {
    for (uint32_t i = 0; i < boundary.size(); ++i) external_[boundary[i]] = i;
    for (uint32_t n : nodes) {
      for (uint32_t out : graph.nodes[n].outputs) produced_.push_back(out);
    }
  }

  Status define(const GraphNode& node) {
    if (Status s_ = define_node(node); !s_.ok())
      return s_.with_context(fmt::format("XNNPACK {} (debug handle {})", node_type_name(node.type),
                                         node.debug_handle));
    return Status();
  }

 private:
  static Status check(xnn_status s, std::string_view what) {
    if (s == xnn_status_success) return Status();
    return not_supported(
        fmt::format("the installed XNNPACK refused {} ({})", what, status_name(s)));
  }

  Result<uint32_t> value(uint32_t id) {
    if (id == kNoValue) return XNN_INVALID_VALUE_ID;
    if (ids_[id] != XNN_INVALID_VALUE_ID) return ids_[id];
    const GraphValue& v = graph_.values[id];
    xnn_datatype type;
    if (!xnn_type(v.dtype, type)) {
      return not_supported(fmt::format("value {} has data type {}", id, data_type_name(v.dtype)));
    }
    uint32_t external_id = XNN_INVALID_VALUE_ID, flags = 0;
    if (auto it = external_.find(id); it != external_.end()) {
      external_id = it->second;
      const bool written_here =
          std::find(produced_.begin(), produced_.end(), id) != produced_.end();
      flags = written_here ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : XNN_VALUE_FLAG_EXTERNAL_INPUT;
    }
    uint32_t out = XNN_INVALID_VALUE_ID;
    xnn_status s;
    if (!v.channel_scales.empty()) {
      s = xnn_define_channelwise_quantized_tensor_value(subgraph_, type, v.channel_scales.data(),
                                                        v.dims.size(), v.channel_dim, v.dims.data(),
                                                        v.data, external_id, flags, &out);
    } else if (v.dtype == DataType::kFp32 || v.dtype == DataType::kFp16) {
      s = xnn_define_tensor_value(subgraph_, type, v.dims.size(), v.dims.data(), v.data,
                                  external_id, flags, &out);
    } else {
      s = xnn_define_quantized_tensor_value(subgraph_, type, v.zero_point, v.scale, v.dims.size(),
                                            v.dims.data(), v.data, external_id, flags, &out);
    }
    ET_RETURN_IF_ERROR(check(s, fmt::format("value {}", id)));
    ids_[id] = out;
    return out;
  }

  // An internal value shaped like `like`, for a clamp XNNPACK cannot fuse.
  Result<uint32_t> temporary(uint32_t like) {
    const GraphValue& v = graph_.values[like];
    uint32_t out = XNN_INVALID_VALUE_ID;
    ET_RETURN_IF_ERROR(
        check(xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, v.dims.size(), v.dims.data(),
                                      nullptr, XNN_INVALID_VALUE_ID, 0, &out),
              "a temporary value"));
    return out;
  }

  Status define_node(const GraphNode& node) {
    std::vector<uint32_t> in;
    for (uint32_t id : node.inputs) {
      ET_ASSIGN_OR_RETURN(uint32_t x, value(id));
      in.push_back(x);
    }
    std::vector<uint32_t> outs;
    for (uint32_t id : node.outputs) {
      ET_ASSIGN_OR_RETURN(uint32_t x, value(id));
      outs.push_back(x);
    }
    const bool separate_clamp = node.has_output_range() && !takes_range(node.type);
    uint32_t out = outs[0];
    if (separate_clamp) {
      ET_ASSIGN_OR_RETURN(out, temporary(node.outputs[0]));
    }
    ET_RETURN_IF_ERROR(define_op(node, in, out, outs));
    if (separate_clamp) {
      ET_RETURN_IF_ERROR(
          check(xnn_define_clamp(subgraph_, node.output_min, node.output_max, out, outs[0], 0),
                "the fused clamp"));
    }
    return Status();
  }

  Status define_op(const GraphNode& node, const std::vector<uint32_t>& in, uint32_t out,
                   const std::vector<uint32_t>& outs) {
    const float lo = node.output_min, hi = node.output_max;
    const uint32_t flags = node.flags & ~kKeepDims;
    const auto& p = node.params;
    xnn_subgraph_t g = subgraph_;
    std::string_view name = node_type_name(node.type);
    switch (node.type) {
      case NodeType::kAdd:
        return check(xnn_define_add2(g, lo, hi, in[0], in[1], out, flags), name);
      case NodeType::kSubtract:
        return check(xnn_define_subtract(g, lo, hi, in[0], in[1], out, flags), name);
      case NodeType::kMultiply:
        return check(xnn_define_multiply2(g, lo, hi, in[0], in[1], out, flags), name);
      case NodeType::kDiv:
        return check(xnn_define_divide(g, lo, hi, in[0], in[1], out, flags), name);
      case NodeType::kMinimum:
        return check(xnn_define_minimum2(g, in[0], in[1], out, flags), name);
      case NodeType::kMaximum:
        return check(xnn_define_maximum2(g, in[0], in[1], out, flags), name);
      case NodeType::kPReLU:
        return check(xnn_define_prelu(g, in[0], in[1], out, flags), name);
      case NodeType::kFullyConnected:
        return check(xnn_define_fully_connected(g, lo, hi, in[0], in[1], in[2], out, flags), name);
      case NodeType::kConv2d:
        return check(
            xnn_define_convolution_2d(g, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9],
                                      p[12], p[10], p[11], lo, hi, in[0], in[1], in[2], out, flags),
            name);
      case NodeType::kDepthwiseConv2d:
        return check(xnn_define_depthwise_convolution_2d(g, p[0], p[1], p[2], p[3], p[4], p[5],
                                                         p[6], p[7], p[8], p[9], p[11], p[12], lo,
                                                         hi, in[0], in[1], in[2], out, flags),
                     name);
      case NodeType::kConvTranspose2d:
        return check(xnn_define_deconvolution_2d(g, p[0], p[1], p[2], p[3], p[13], p[14], p[4],
                                                 p[5], p[6], p[7], p[8], p[9], p[12], p[10], p[11],
                                                 lo, hi, in[0], in[1], in[2], out, flags),
                     name);
      case NodeType::kAvgPooling2d:
        return check(xnn_define_average_pooling_2d(g, p[0], p[1], p[2], p[3], p[4], p[5], p[6],
                                                   p[7], lo, hi, in[0], out, flags),
                     name);
      case NodeType::kMaxPooling2d:
        return check(xnn_define_max_pooling_2d(g, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7],
                                               std::max(p[8], 1u), std::max(p[9], 1u), lo, hi,
                                               in[0], out, flags),
                     name);
      case NodeType::kArgMaxPooling2d:
        return check(xnn_define_argmax_pooling_2d(g, p[0], p[1], p[2], p[3], p[4], p[5], in[0],
                                                  outs[0], outs[1], flags),
                     name);
      case NodeType::kGlobalAvgPooling2d:
        return check(xnn_define_global_average_pooling_2d(g, lo, hi, in[0], out, flags), name);
      case NodeType::kStaticResizeBilinear2D:
        return check(xnn_define_static_resize_bilinear_2d(g, p[0], p[1], in[0], out, flags), name);
      case NodeType::kStaticConstantPad:
        return check(xnn_define_static_constant_pad(g, node.list.data(), node.list2.data(),
                                                    node.scalar, in[0], out, flags),
                     name);
      case NodeType::kStaticReshape:
        return check(
            xnn_define_static_reshape(g, node.list.size(), node.list.data(), in[0], out, flags),
            name);
      case NodeType::kClamp:
        return check(xnn_define_clamp(g, lo, hi, in[0], out, flags), name);
      case NodeType::kSoftmax:
        return check(xnn_define_softmax(g, in[0], out, flags), name);
      case NodeType::kSigmoid:
        return check(xnn_define_sigmoid(g, in[0], out, flags), name);
      case NodeType::kFloor:
        return check(xnn_define_floor(g, in[0], out, flags), name);
      case NodeType::kCeiling:
        return check(xnn_define_ceiling(g, in[0], out, flags), name);
      case NodeType::kSquareRoot:
        return check(xnn_define_square_root(g, in[0], out, flags), name);
      case NodeType::kSquare:
        return check(xnn_define_square(g, in[0], out, flags), name);
      case NodeType::kHardswish:
        return check(xnn_define_hardswish(g, in[0], out, flags), name);
      case NodeType::kNegate:
        return check(xnn_define_negate(g, in[0], out, flags), name);
      case NodeType::kAbs:
        return check(xnn_define_abs(g, in[0], out, flags), name);
      case NodeType::kLeakyReLU:
        return check(xnn_define_leaky_relu(g, node.scalar, in[0], out, flags), name);
      case NodeType::kElu:
        return check(xnn_define_elu(g, node.scalar, in[0], out, flags), name);
      case NodeType::kConvert:
        return check(xnn_define_convert(g, in[0], out, flags), name);
      default:
        return not_supported("the installed XNNPACK has no such node");
    }
  }

  const Graph& graph_;
  xnn_subgraph_t subgraph_;
  std::vector<uint32_t> ids_;  // graph value id -> subgraph value id
  std::map<uint32_t, uint32_t> external_;
  std::vector<uint32_t> produced_;
};

}  // namespace

Status ensure_xnnpack_initialized() {
  static const xnn_status status = xnn_initialize(/*allocator=*/nullptr);
  if (status != xnn_status_success) {
    return failed_precondition(
        fmt::format("XNNPACK could not initialise ({}): this CPU lacks the instructions it needs",
                    status_name(status)));
  }
  return Status();
}

bool xnnpack_runs(const Graph& graph, const GraphNode& node) {
  if (kernel_family(node.type) != KernelFamily::kNone) return false;  // not in the 2022 XNNPACK
  if (node.type == NodeType::kFullyConnected) {
    // The 2022 XNNPACK has per-channel (qcint8) filters for convolutions only; its
    // fully connected node refuses them (kernel_quantized.cc runs that form).
    if (graph.values[node.inputs[1]].dtype == DataType::kQcInt8) return false;
    if (fully_connected_packed(graph, node)) return false;  // packed for our kernels
  }
  return all_node_values(graph, node, [](const GraphValue& v) {
    xnn_datatype unused;
    return xnn_type(v.dtype, unused);
  });
}

Result<XnnRun> XnnRun::create(const Graph& graph, std::span<const uint32_t> nodes,
                              std::vector<uint32_t> boundary, pthreadpool_t threadpool) {
  ET_RETURN_IF_ERROR(ensure_xnnpack_initialized());
  xnn_subgraph_t subgraph = nullptr;
  if (xnn_create_subgraph(static_cast<uint32_t>(boundary.size()), 0, &subgraph) !=
      xnn_status_success) {
    return resource_exhausted("XNNPACK could not create a subgraph");
  }
  std::unique_ptr<xnn_subgraph, decltype(&xnn_delete_subgraph)> owner(subgraph,
                                                                      &xnn_delete_subgraph);
  SubgraphBuilder builder(graph, subgraph, boundary, nodes);
  for (uint32_t n : nodes) ET_RETURN_IF_ERROR(builder.define(graph.nodes[n]));
  xnn_runtime_t runtime = nullptr;
  // Workers sleep after the runtime's last operator instead of polling for the next
  // runtime's first (runtime/core/work_pool.h; docs/fast_path.md, "Waiting").
  const xnn_status s =
      xnn_create_runtime_v2(subgraph, threadpool, XNN_FLAG_YIELD_WORKERS, &runtime);
  if (s != xnn_status_success) {
    return not_supported(fmt::format("XNNPACK could not compile nodes {}..{} ({})", nodes.front(),
                                     nodes.back(), status_name(s)));
  }
  XnnRun run;
  run.runtime_.reset(runtime);
  run.boundary_ = std::move(boundary);
  return run;
}

Status XnnRun::run(std::span<void* const> ptrs) {
  bool changed = bound_.size() != boundary_.size();
  bound_.resize(boundary_.size());
  for (uint32_t i = 0; i < boundary_.size(); ++i) {
    void* data = ptrs[boundary_[i]];
    changed |= bound_[i].id != i || bound_[i].data != data;
    bound_[i] = xnn_external_value{i, data};
  }
  if (changed) {
    const xnn_status s = xnn_setup_runtime(runtime_.get(), bound_.size(), bound_.data());
    if (s != xnn_status_success) {
      bound_.clear();
      return internal_error(fmt::format("XNNPACK setup failed ({})", status_name(s)));
    }
  }
  const xnn_status s = xnn_invoke_runtime(runtime_.get());
  if (s != xnn_status_success) {
    return internal_error(fmt::format("XNNPACK run failed ({})", status_name(s)));
  }
  return Status();
}

}  // namespace et::xnn
