// A method's values (the .pte's EValues): None, scalars, strings, tensors and lists.
//
// Lists refer to other values by pointer: an IntList's items are Int values that prim
// ops may change while the method runs (symbolic sizes), so the list is read at the
// moment a kernel asks for it. Values are owned by their Method; a Value never owns
// the tensor or list it points to.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/core/tensor.h"

namespace et {

enum class ValueKind : uint8_t {
  kNone = 0,
  kInt,
  kBool,
  kDouble,
  kTensor,
  kString,
  kIntList,
  kDoubleList,
  kBoolList,
  kTensorList,
  kOptionalTensorList,
};

// "tensor", "int", "float" (double), "bool", "string", "int list", ...
std::string_view value_kind_name(ValueKind kind);

class Value;

// Items of an IntList: pointers to Int values, materialised on read.
struct IntListStorage {
  std::vector<const Value*> items;
  std::vector<int64_t> scratch;  // filled by Value::int_list()
};

// Items of a TensorList or OptionalTensorList (nullptr for None).
struct TensorListStorage {
  std::vector<Tensor*> items;
};

class Value {
 public:
  Value() = default;
  static Value none() { return Value(); }
  static Value from_int(int64_t v);
  static Value from_bool(bool v);
  static Value from_double(double v);
  static Value from_tensor(Tensor* t);
  static Value from_string(std::string_view s);
  static Value from_int_list(IntListStorage* list);
  static Value from_double_list(std::span<const double> items);
  static Value from_bool_list(std::span<const bool> items);
  static Value from_tensor_list(TensorListStorage* list, bool optional);

  ValueKind kind() const { return kind_; }
  bool is_none() const { return kind_ == ValueKind::kNone; }
  bool is_tensor() const { return kind_ == ValueKind::kTensor; }
  bool is_int() const { return kind_ == ValueKind::kInt; }
  bool is_double() const { return kind_ == ValueKind::kDouble; }
  bool is_bool() const { return kind_ == ValueKind::kBool; }

  // Accessors REQUIRE the matching kind; kernels check kinds through KernelArgs.
  int64_t to_int() const { return int_; }
  bool to_bool() const { return bool_; }
  double to_double() const { return double_; }
  Tensor& to_tensor() const { return *tensor_; }
  std::string_view to_string() const { return string_; }
  // Reads the current value of every item.
  std::span<const int64_t> int_list() const;
  std::span<const double> double_list() const { return double_list_; }
  std::span<const bool> bool_list() const { return bool_list_; }
  std::span<Tensor* const> tensor_list() const { return tensor_list_->items; }

  void set_int(int64_t v) {
    kind_ = ValueKind::kInt;
    int_ = v;
  }
  void set_bool(bool v) {
    kind_ = ValueKind::kBool;
    bool_ = v;
  }
  void set_double(double v) {
    kind_ = ValueKind::kDouble;
    double_ = v;
  }

 private:
  ValueKind kind_ = ValueKind::kNone;
  int64_t int_ = 0;
  double double_ = 0;
  bool bool_ = false;
  Tensor* tensor_ = nullptr;
  std::string_view string_;
  IntListStorage* int_list_ = nullptr;
  std::span<const double> double_list_;
  std::span<const bool> bool_list_;
  TensorListStorage* tensor_list_ = nullptr;
};

}  // namespace et
