#include "runtime/core/scalar_type.h"

#include <fmt/format.h>

#include <array>

namespace et {
namespace {

struct TypeInfo {
  ScalarType type;
  std::string_view name;
  size_t size;
};

constexpr std::array kTypes = {
    TypeInfo{ScalarType::kByte, "uint8", 1},
    TypeInfo{ScalarType::kChar, "int8", 1},
    TypeInfo{ScalarType::kShort, "int16", 2},
    TypeInfo{ScalarType::kInt, "int32", 4},
    TypeInfo{ScalarType::kLong, "int64", 8},
    TypeInfo{ScalarType::kHalf, "float16", 2},
    TypeInfo{ScalarType::kFloat, "float32", 4},
    TypeInfo{ScalarType::kDouble, "float64", 8},
    TypeInfo{ScalarType::kComplexHalf, "complex32", 4},
    TypeInfo{ScalarType::kComplexFloat, "complex64", 8},
    TypeInfo{ScalarType::kComplexDouble, "complex128", 16},
    TypeInfo{ScalarType::kBool, "bool", 1},
    TypeInfo{ScalarType::kQInt8, "qint8", 1},
    TypeInfo{ScalarType::kQUInt8, "quint8", 1},
    TypeInfo{ScalarType::kQInt32, "qint32", 4},
    TypeInfo{ScalarType::kBFloat16, "bfloat16", 2},
    TypeInfo{ScalarType::kQUInt4x2, "quint4x2", 1},
    TypeInfo{ScalarType::kQUInt2x4, "quint2x4", 1},
    TypeInfo{ScalarType::kBits16, "bits16", 2},
    TypeInfo{ScalarType::kFloat8_e5m2, "float8_e5m2", 1},
    TypeInfo{ScalarType::kFloat8_e4m3fn, "float8_e4m3fn", 1},
    TypeInfo{ScalarType::kFloat8_e5m2fnuz, "float8_e5m2fnuz", 1},
    TypeInfo{ScalarType::kFloat8_e4m3fnuz, "float8_e4m3fnuz", 1},
    TypeInfo{ScalarType::kUInt16, "uint16", 2},
    TypeInfo{ScalarType::kUInt32, "uint32", 4},
    TypeInfo{ScalarType::kUInt64, "uint64", 8},
};

const TypeInfo* find(ScalarType type) {
  for (const auto& t : kTypes) {
    if (t.type == type) return &t;
  }
  return nullptr;
}

}  // namespace

Result<ScalarType> scalar_type_from_code(int code) {
  for (const auto& t : kTypes) {
    if (static_cast<int>(t.type) == code) return t.type;
  }
  return invalid_program(fmt::format("unknown scalar type code {}", code));
}

size_t element_size(ScalarType type) {
  const TypeInfo* t = find(type);
  return t ? t->size : 0;
}

std::string_view scalar_type_name(ScalarType type) {
  const TypeInfo* t = find(type);
  return t ? t->name : "unknown";
}

Result<ScalarType> scalar_type_from_name(std::string_view name) {
  for (const auto& t : kTypes) {
    if (t.name == name) return t.type;
  }
  return not_found(fmt::format("no scalar type is named '{}'", name));
}

bool is_floating(ScalarType type) {
  return type == ScalarType::kHalf || type == ScalarType::kBFloat16 || type == ScalarType::kFloat ||
         type == ScalarType::kDouble;
}

bool is_complex(ScalarType type) {
  return type == ScalarType::kComplexHalf || type == ScalarType::kComplexFloat ||
         type == ScalarType::kComplexDouble;
}

bool is_integral(ScalarType type, bool include_bool) {
  switch (type) {
    case ScalarType::kByte:
    case ScalarType::kChar:
    case ScalarType::kShort:
    case ScalarType::kInt:
    case ScalarType::kLong:
    case ScalarType::kUInt16:
    case ScalarType::kUInt32:
    case ScalarType::kUInt64:
      return true;
    case ScalarType::kBool:
      return include_bool;
    default:
      return false;
  }
}

}  // namespace et
