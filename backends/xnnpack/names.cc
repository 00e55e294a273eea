#include "backends/xnnpack/graph.h"

namespace et::xnn {

std::string_view node_type_name(NodeType type) {
  static constexpr std::string_view kNames[] = {
      "invalid",
      "Add",
      "FullyConnected",
      "Softmax",
      "Sigmoid",
      "StaticTranspose",
      "Clamp",
      "Conv2d",
      "Div",
      "StaticResizeBilinear2D",
      "StaticConstantPad",
      "AvgPooling2d",
      "Minimum",
      "DepthwiseConv2d",
      "MaxPooling2d",
      "Multiply",
      "Subtract",
      "Floor",
      "Convert",
      "GlobalAvgPooling2d",
      "StaticReshape",
      "ArgMaxPooling2d",
      "SquareRoot",
      "Ceiling",
      "Hardswish",
      "LeakyReLU",
      "Maximum",
      "Negate",
      "Square",
      "ELU",
      "Abs",
      "PReLU",
      "Concatenate2",
      "Concatenate3",
      "Concatenate4",
      "StaticSlice",
      "ScaledDotProductAttention",
      "BatchMatrixMultiply",
      "Concatenate5",
      "ConvTranspose2d",
      "ReciprocalSquareRoot",
      "Log",
      "Gelu",
      "Tanh",
      "Exp",
      "Sin",
      "Copy",
      "Cos",
  };
  static_assert(std::size(kNames) == kLastNodeType + 1);
  const auto i = static_cast<size_t>(type);
  return i < std::size(kNames) ? kNames[i] : "invalid";
}

std::string_view data_type_name(DataType type) {
  static constexpr std::string_view kNames[] = {
      "invalid", "fp32",   "fp16",   "qint8",  "quint8", "qint32", "qcint8", "qcint32",
      "qcint4",  "qdint8", "qbint4", "qpint8", "int32",  "pfp32",  "bf16",
  };
  const auto i = static_cast<size_t>(type);
  return i < std::size(kNames) ? kNames[i] : "invalid";
}

size_t data_type_size(DataType type) {
  switch (type) {
    case DataType::kFp32:
    case DataType::kQInt32:
    case DataType::kQcInt32:
    case DataType::kInt32:
      return 4;
    case DataType::kFp16:
    case DataType::kBf16:
      return 2;
    case DataType::kQInt8:
    case DataType::kQUInt8:
    case DataType::kQcInt8:
    case DataType::kQdInt8:
      return 1;
    default:  // sub-byte and packed types
      return 0;
  }
}

}  // namespace et::xnn
