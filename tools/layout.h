// Copying tensor elements between layouts (C order and a dim order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace et::tools {

// Copies every element of a tensor of `sizes` from `src` (element strides
// `src_strides`) to `dst` (element strides `dst_strides`).
void copy_strided(const void* src, std::span<const int64_t> src_strides, void* dst,
                  std::span<const int64_t> dst_strides, std::span<const int64_t> sizes,
                  size_t element_size);

}  // namespace et::tools
