#include "dtypes.h"

#include <cstring>

namespace etclient::python {
namespace {

// DLPack 0.8's kDLBool; Debian's dlpack.h (0.6) predates it.
constexpr uint8_t kDLBoolCode = 6;

struct Row {
  DType dtype;
  const char* name;
  const char* format;  // buffer protocol, as published
  const char* typestr;
  DLDataType dl;
};

// clang-format off
constexpr Row kRows[] = {
    {DType::kUInt8,    "uint8",    "B", "|u1", {kDLUInt, 8, 1}},
    {DType::kInt8,     "int8",     "b", "|i1", {kDLInt, 8, 1}},
    {DType::kInt16,    "int16",    "h", "<i2", {kDLInt, 16, 1}},
    {DType::kInt32,    "int32",    "i", "<i4", {kDLInt, 32, 1}},
    {DType::kInt64,    "int64",    "q", "<i8", {kDLInt, 64, 1}},
    {DType::kFloat16,  "float16",  "e", "<f2", {kDLFloat, 16, 1}},
    {DType::kFloat32,  "float32",  "f", "<f4", {kDLFloat, 32, 1}},
    {DType::kFloat64,  "float64",  "d", "<f8", {kDLFloat, 64, 1}},
    {DType::kBool,     "bool",     "?", "|b1", {kDLBoolCode, 8, 1}},
    {DType::kBFloat16, "bfloat16", "H", "<u2", {kDLBfloat, 16, 1}},
};
// clang-format on

const Row& row(DType dtype) { return kRows[static_cast<int>(dtype)]; }

}  // namespace

std::optional<DType> dtype_from_name(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "half") return DType::kFloat16;
  if (name == "long") return DType::kInt64;
  if (name == "int") return DType::kInt32;
  for (const Row& r : kRows) {
    if (name == r.name) return r.dtype;
  }
  return std::nullopt;
}

std::optional<DType> dtype_from_buffer(const char* format, Py_ssize_t itemsize) {
  std::string_view f = format ? format : "B";  // no format means unsigned bytes
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.remove_prefix(1);
  if (f.size() != 1) return std::nullopt;  // '>', '!', structs, arrays of codes
  switch (f[0]) {
    case '?':
      return itemsize == 1 ? std::optional(DType::kBool) : std::nullopt;
    case 'e':
    case 'f':
    case 'd':
      if (itemsize == 2) return DType::kFloat16;
      if (itemsize == 4) return DType::kFloat32;
      if (itemsize == 8) return DType::kFloat64;
      return std::nullopt;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
      if (itemsize == 1) return DType::kInt8;
      if (itemsize == 2) return DType::kInt16;
      if (itemsize == 4) return DType::kInt32;
      if (itemsize == 8) return DType::kInt64;
      return std::nullopt;
    case 'B':
    case 'c':
      return itemsize == 1 ? std::optional(DType::kUInt8) : std::nullopt;
    default:
      return std::nullopt;  // wider unsigned integers, pointers, ... have no DType
  }
}

const char* buffer_format(DType dtype) { return row(dtype).format; }
bool has_buffer_format(DType dtype) { return dtype != DType::kBFloat16; }

std::optional<DType> dtype_from_dlpack(DLDataType type) {
  if (type.lanes != 1) return std::nullopt;
  for (const Row& r : kRows) {
    if (r.dl.code == type.code && r.dl.bits == type.bits) return r.dtype;
  }
  return std::nullopt;
}

DLDataType to_dlpack(DType dtype) { return row(dtype).dl; }
const char* array_typestr(DType dtype) { return row(dtype).typestr; }

}  // namespace etclient::python
