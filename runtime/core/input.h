// What a caller hands a method as an input: the one description every client path
// (buffer protocol, DLPack, torch, shared-memory reference) converges on, and the
// checks it must pass (DESIGN.md section 4) before a method reads it.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/core/scalar_type.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/core/value.h"

namespace et {

// Caller memory holding a tensor. The caller owns it; the method reads it only as
// Method::set_input() documents.
struct TensorView {
  void* data = nullptr;
  size_t nbytes = 0;  // bytes reachable from `data`; the element count must fit in it
  ScalarType dtype = ScalarType::kFloat;
  std::span<const int64_t> sizes;
  std::span<const int64_t> strides;  // in elements; empty: no layout stated (accepted)
  DeviceType device = DeviceType::kCpu;
  bool writable = true;  // false: the method never writes it (copied when needed)
};

struct InputValue {
  ValueKind kind = ValueKind::kNone;
  TensorView tensor;
  int64_t int_value = 0;
  double double_value = 0;
  bool bool_value = false;

  static InputValue of_tensor(const TensorView& view) {
    InputValue v;
    v.kind = ValueKind::kTensor;
    v.tensor = view;
    return v;
  }
  static InputValue of_int(int64_t x) {
    InputValue v;
    v.kind = ValueKind::kInt;
    v.int_value = x;
    return v;
  }
  static InputValue of_double(double x) {
    InputValue v;
    v.kind = ValueKind::kDouble;
    v.double_value = x;
    return v;
  }
  static InputValue of_bool(bool x) {
    InputValue v;
    v.kind = ValueKind::kBool;
    v.bool_value = x;
    return v;
  }
};

// Checks a tensor input against the method's declaration of input `index`, in this
// order: rank (before any stride arithmetic), sizes fit the 32-bit size type (also
// for empty tensors), dtype, device, shape against the declared (upper-bound) shape,
// layout against the declared dim order (dims of size one carry no layout; a view
// stating no strides is accepted), memory present and large enough.
// Every error is InvalidArgument (NotSupported for an unreachable device), starts
// with "input <index>" and says what to do.
Status check_tensor_input(size_t index, const Tensor& declared, const TensorView& view);

// Dim order described by `strides` for `sizes`, if one does (ties and size-one dims
// resolved toward the identity order). False for transposed or strided views.
bool dim_order_from_strides(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                            std::span<uint8_t> dim_order);

}  // namespace et
