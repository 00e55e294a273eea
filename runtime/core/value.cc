#include "runtime/core/value.h"

namespace et {

std::string_view value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNone:
      return "none";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kDouble:
      return "float";
    case ValueKind::kTensor:
      return "tensor";
    case ValueKind::kString:
      return "string";
    case ValueKind::kIntList:
      return "int list";
    case ValueKind::kDoubleList:
      return "float list";
    case ValueKind::kBoolList:
      return "bool list";
    case ValueKind::kTensorList:
      return "tensor list";
    case ValueKind::kOptionalTensorList:
      return "optional tensor list";
  }
  return "unknown";
}

Value Value::from_int(int64_t v) {
  Value out;
  out.set_int(v);
  return out;
}
Value Value::from_bool(bool v) {
  Value out;
  out.set_bool(v);
  return out;
}
Value Value::from_double(double v) {
  Value out;
  out.set_double(v);
  return out;
}
Value Value::from_tensor(Tensor* t) {
  Value out;
  out.kind_ = ValueKind::kTensor;
  out.tensor_ = t;
  return out;
}
Value Value::from_string(std::string_view s) {
  Value out;
  out.kind_ = ValueKind::kString;
  out.string_ = s;
  return out;
}
Value Value::from_int_list(IntListStorage* list) {
  Value out;
  out.kind_ = ValueKind::kIntList;
  out.int_list_ = list;
  return out;
}
Value Value::from_double_list(std::span<const double> items) {
  Value out;
  out.kind_ = ValueKind::kDoubleList;
  out.double_list_ = items;
  return out;
}
Value Value::from_bool_list(std::span<const bool> items) {
  Value out;
  out.kind_ = ValueKind::kBoolList;
  out.bool_list_ = items;
  return out;
}
Value Value::from_tensor_list(TensorListStorage* list, bool optional) {
  Value out;
  out.kind_ = optional ? ValueKind::kOptionalTensorList : ValueKind::kTensorList;
  out.tensor_list_ = list;
  return out;
}

std::span<const int64_t> Value::int_list() const {
  auto& scratch = int_list_->scratch;
  scratch.resize(int_list_->items.size());
  for (size_t i = 0; i < scratch.size(); ++i) scratch[i] = int_list_->items[i]->to_int();
  return scratch;
}

}  // namespace et
