// Internal to transpose.cc and transpose_avx2.cc: the plain tiled transpose, for
// elements the vector path does not take and for the edges of the plane it leaves.
#pragma once

#include <cstdint>

namespace et::kernels::detail {
namespace {

// The tiled transpose of rows [r0, r1) x cols [c0, c1): square tiles, so the input lines
// read along c stay in cache while the tile's output lines are written along r.
template <typename T>
void transpose_tiles(const T* in, int64_t in_stride, T* out, int64_t out_stride, int64_t r0,
                     int64_t r1, int64_t c0, int64_t c1) {
  constexpr int64_t kTile = 16;
  for (int64_t cb = c0; cb < c1; cb += kTile) {
    const int64_t ce = cb + kTile < c1 ? cb + kTile : c1;
    for (int64_t rb = r0; rb < r1; rb += kTile) {
      const int64_t re = rb + kTile < r1 ? rb + kTile : r1;
      for (int64_t c = cb; c < ce; ++c) {
        for (int64_t r = rb; r < re; ++r) out[c * out_stride + r] = in[r * in_stride + c];
      }
    }
  }
}

}  // namespace
}  // namespace et::kernels::detail
