// PyTorch's type promotion for the dtypes the kernels support (bool, uint8, int8,
// int16, int32, int64, float16, bfloat16, float32, float64).
#pragma once

#include "runtime/core/kernel.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"

namespace et::kernels {

// torch.promote_types(a, b).
ScalarType promote_types(ScalarType a, ScalarType b);

// torch.result_type over an op's operands: tensors with dimensions decide first, then
// 0-d tensors, then Python numbers (Scalar arguments), each lower tier only raising the
// result's category (bool < integer < floating). A float Scalar counts as float32
// (the default dtype), an int Scalar as int64.
class ResultType {
 public:
  ResultType& add(const Tensor& t);
  ResultType& add(const Scalar& s);
  ScalarType get() const;

 private:
  static ScalarType combine(ScalarType higher, ScalarType lower);
  bool has_dim_ = false, has_zero_ = false, has_scalar_ = false;
  ScalarType dim_ = ScalarType::kBool, zero_ = ScalarType::kBool, scalar_ = ScalarType::kBool;
};

// True when a value of `from` may be written to an output of `to` (PyTorch's
// can_cast: no floating to integral, no numeric to bool).
bool can_cast(ScalarType from, ScalarType to);

}  // namespace et::kernels
