// Reading and writing NumPy .npy files (format version 1.0-3.0), without numpy.
//
// Supported element types: little-endian (or byte-order-free) bool, int8/16/32/64,
// uint8/16/32/64, float16/32/64. Fortran-ordered arrays are converted to C order on
// read. bfloat16 has no .npy type: it travels as uint16 bit patterns.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/scalar_type.h"
#include "runtime/core/status.h"

namespace et::tools {

struct NpyArray {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> shape;  // empty for a 0-d array
  std::vector<uint8_t> data;   // C order
};

// Errors: IoError for an unreadable file; InvalidArgument naming what is wrong with
// the header (magic, version, dict, dtype, shape) or a payload shorter than the shape.
Result<NpyArray> read_npy(const std::string& path);
Result<NpyArray> parse_npy(std::span<const uint8_t> bytes);

// Writes `data` (C order, `shape`) as a version 1.0 .npy file.
Status write_npy(const std::string& path, ScalarType dtype, std::span<const int64_t> shape,
                 const void* data);

}  // namespace et::tools
