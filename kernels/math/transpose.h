// Transposing a plane of elements: the layout changes (NCHW <-> NHWC, permutes that
// swap the innermost dim) that both the portable kernels and the XNNPACK backend's own
// layout nodes run. Four-byte elements go eight by eight through AVX2 shuffles where the
// CPU has them (cpu_isa.h); other sizes, and other CPUs, tile by tile in plain C++.
#pragma once

#include <cstddef>
#include <cstdint>

namespace et::kernels {

// out[c * out_stride + r] = in[r * in_stride + c] for r < rows, c < cols; elements of
// `elsize` bytes, strides in elements. Elements of a size other than 1, 2, 4 or 8 are
// not handled: returns false and writes nothing. Overlapping in and out give wrong
// values, never undefined behaviour (no memcpy; see kernels.md).
bool transpose_plane(const void* in, int64_t in_stride, void* out, int64_t out_stride, int64_t rows,
                     int64_t cols, size_t elsize);

namespace detail {
// transpose_plane for 4-byte elements, compiled for AVX2 (transpose_avx2.cc).
void transpose_plane32_avx2(const uint32_t* in, int64_t in_stride, uint32_t* out,
                            int64_t out_stride, int64_t rows, int64_t cols);
}  // namespace detail

}  // namespace et::kernels
