// Element types of tensors, numbered as in the .pte format (c10 ScalarType).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/status.h"

namespace et {

enum class ScalarType : int8_t {
  kByte = 0,  // uint8
  kChar = 1,  // int8
  kShort = 2,
  kInt = 3,
  kLong = 4,
  kHalf = 5,
  kFloat = 6,
  kDouble = 7,
  kComplexHalf = 8,     // pairs of float16 (real, imaginary)
  kComplexFloat = 9,    // std::complex<float>
  kComplexDouble = 10,  // std::complex<double>
  kBool = 11,
  kQInt8 = 12,
  kQUInt8 = 13,
  kQInt32 = 14,
  kBFloat16 = 15,
  kQUInt4x2 = 16,
  kQUInt2x4 = 17,
  kBits16 = 22,
  kFloat8_e5m2 = 23,
  kFloat8_e4m3fn = 24,
  kFloat8_e5m2fnuz = 25,
  kFloat8_e4m3fnuz = 26,
  kUInt16 = 27,
  kUInt32 = 28,
  kUInt64 = 29,
};

// The ScalarType with format code `code`, or InvalidProgram naming the code.
Result<ScalarType> scalar_type_from_code(int code);

// Bytes per element (1 for the packed sub-byte types, which hold two or four per byte).
size_t element_size(ScalarType type);

// The name users know: "float32", "bfloat16", "int64", "bool", ...
std::string_view scalar_type_name(ScalarType type);

// The ScalarType named `name` as scalar_type_name() writes it, or NotFound.
Result<ScalarType> scalar_type_from_name(std::string_view name);

bool is_floating(ScalarType type);  // float16, bfloat16, float32, float64
bool is_complex(ScalarType type);   // complex32, complex64, complex128
bool is_integral(ScalarType type, bool include_bool);

}  // namespace et
