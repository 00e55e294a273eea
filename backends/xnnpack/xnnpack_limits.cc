#include "backends/xnnpack/xnnpack_limits.h"

#include <fmt/format.h>

#include <limits>

namespace et::xnn {
namespace {

constexpr uint32_t kTransposeB = 0x1;  // FullyConnected filter [K, N]
// XNNPACK's requantization parameters assert scale >= 2^-32 (and refuse >= 256).
constexpr double kMinRequantScale = 0x1p-32;
constexpr double kMaxRequantScale = 256.0;
// Resize-bilinear indirection asserts that every source coordinate, computed in float,
// lies inside the input; rounding breaks that for output sizes near 2^23 (half that,
// for a margin).
constexpr size_t kMaxResizeDim = size_t{1} << 22;

class LimitChecker {
 public:
  LimitChecker(const Graph& graph, const GraphNode& node) : graph_(graph), node_(node) {}

  Status check() const {
    switch (node_.type) {
      case NodeType::kConv2d:
      case NodeType::kDepthwiseConv2d:
        ET_RETURN_IF_ERROR(check_padding());
        ET_RETURN_IF_ERROR(check_filter_channels(node_.type == NodeType::kConv2d ? 0 : 3));
        return check_filter_requantization();
      case NodeType::kConvTranspose2d:
        ET_RETURN_IF_ERROR(check_padding());
        ET_RETURN_IF_ERROR(check_filter_channels(0));
        ET_RETURN_IF_ERROR(check_transposed_geometry());
        return check_filter_requantization();
      case NodeType::kFullyConnected:
        ET_RETURN_IF_ERROR(check_filter_channels((node_.flags & kTransposeB) ? 1 : 0));
        return check_filter_requantization();
      case NodeType::kAvgPooling2d:
        // XNNPACK's average pooling has no dilation: it would size its output without it.
        if (node_.params[8] > 1 || node_.params[9] > 1) {
          return unsupported(fmt::format("dilation {}x{} (XNNPACK's average pooling has none)",
                                         node_.params[8], node_.params[9]));
        }
        return check_padding();
      case NodeType::kMaxPooling2d:
        return check_padding();
      case NodeType::kArgMaxPooling2d: {
        // XNNPACK writes 32-bit indices whatever the index value's type says.
        const GraphValue& index = value(node_.outputs[1]);
        if (data_type_size(index.dtype) != 4) {
          return invalid(fmt::format("the index output is {}; XNNPACK writes 32-bit indices",
                                     data_type_name(index.dtype)));
        }
        return check_padding();
      }
      case NodeType::kGlobalAvgPooling2d: {
        // Averaging folds 1 / (H * W) into the requantization scale.
        const std::vector<size_t>& x = value(node_.inputs[0]).dims;
        return check_requantization(1.0 / (static_cast<double>(x[1]) * static_cast<double>(x[2])));
      }
      case NodeType::kStaticResizeBilinear2D:
        if (node_.params[0] >= kMaxResizeDim || node_.params[1] >= kMaxResizeDim) {
          return unsupported(fmt::format(
              "resizing to {}x{}: XNNPACK's bilinear resize is exact only below {} per side",
              node_.params[0], node_.params[1], kMaxResizeDim));
        }
        return Status();
      default:
        return Status();
    }
  }

 private:
  const GraphValue& value(uint32_t id) const { return graph_.values[id]; }

  Status unsupported(std::string what) const {
    return not_supported(
        fmt::format("XNNPACK {} (debug handle {}): {}: the installed XNNPACK "
                    "cannot run this safely; export the model without delegating this "
                    "node to XNNPACK",
                    node_type_name(node_.type), node_.debug_handle, what));
  }
  Status invalid(std::string what) const {
    return invalid_program(fmt::format("XNNPACK {} (debug handle {}): {}",
                                       node_type_name(node_.type), node_.debug_handle, what));
  }

  // XNNPACK adds the two paddings of a dimension (top/bottom, left/right) in 32 bits.
  Status check_padding() const {
    const auto& p = node_.params;
    const uint64_t height = uint64_t{p[0]} + p[2], width = uint64_t{p[1]} + p[3];
    if (height > std::numeric_limits<uint32_t>::max() ||
        width > std::numeric_limits<uint32_t>::max()) {
      return invalid(fmt::format("paddings add up to {} x {}", height, width));
    }
    return Status();
  }

  // XNNPACK reads one scale per output channel of a per-channel filter, along the
  // dimension it assumes; scales along any other dimension would be read past.
  Status check_filter_channels(uint32_t output_channel_dim) const {
    const GraphValue& w = value(node_.inputs[1]);
    if (!w.channel_scales.empty() && w.channel_dim != output_channel_dim) {
      return invalid(
          fmt::format("the filter's scales run along dim {}, not the output "
                      "channels (dim {})",
                      w.channel_dim, output_channel_dim));
    }
    return Status();
  }

  Status check_filter_requantization() const {
    const GraphValue& w = value(node_.inputs[1]);
    // Per-channel filters take another path in XNNPACK, which refuses bad scales itself.
    if (!w.channel_scales.empty()) return Status();
    return check_requantization(w.scale);
  }

  // Quantized nodes requantize by input scale x `factor` / output scale.
  Status check_requantization(double factor) const {
    const GraphValue& x = value(node_.inputs[0]);
    const GraphValue& y = value(node_.outputs[0]);
    const bool quantized = x.dtype == DataType::kQInt8 || x.dtype == DataType::kQUInt8;
    if (!quantized) return Status();
    const double scale = static_cast<double>(x.scale) * factor / static_cast<double>(y.scale);
    if (!(scale >= kMinRequantScale && scale < kMaxRequantScale)) {
      return unsupported(
          fmt::format("requantization scale {:g} (input scale {:g}, output "
                      "scale {:g}) is outside [2^-32, 256)",
                      scale, x.scale, y.scale));
    }
    return Status();
  }

  // Strided transposed convolutions run as one sub-convolution per stride offset, each
  // sized by (output - offset) / stride in unsigned arithmetic: an output smaller than
  // the stride wraps that around (an assert or a write past the output).
  Status check_transposed_geometry() const {
    const auto& p = node_.params;
    const size_t sh = p[6], sw = p[7], adj_h = p[13], adj_w = p[14];
    if (adj_h >= sh || adj_w >= sw) {
      return unsupported(fmt::format("output adjustment {}x{} is not smaller than the stride {}x{}",
                                     adj_h, adj_w, sh, sw));
    }
    const std::vector<size_t>& y = value(node_.outputs[0]).dims;
    if ((sh > 1 || sw > 1) && (y[1] < sh || y[2] < sw)) {
      return unsupported(
          fmt::format("output {}x{} is smaller than the stride {}x{}", y[1], y[2], sh, sw));
    }
    return Status();
  }

  const Graph& graph_;
  const GraphNode& node_;
};

}  // namespace

Status check_xnnpack_limits(const Graph& graph, const GraphNode& node) {
  return LimitChecker(graph, node).check();
}

}  // namespace et::xnn
