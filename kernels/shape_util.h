// Shapes, broadcasting and strided iteration shared by the kernels.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "runtime/kernel.h"
#include "runtime/tensor.h"

namespace et::kernels {

struct Shape {
  std::array<int64_t, kMaxRank> sizes{};
  int rank = 0;
  std::span<const int64_t> view() const { return {sizes.data(), static_cast<size_t>(rank)}; }
};

// Element strides of a dense row-major (C order) tensor of `shape`.
std::array<int64_t, kMaxRank> row_major_strides(const Shape& shape);

// Numpy/PyTorch broadcasting of a and b; InvalidArgument naming both shapes.
Result<Shape> broadcast_shapes(const KernelContext& ctx, const Tensor& a, const Tensor& b);

// Element strides of `t` seen from an output of rank `out_rank` it broadcasts to:
// leading and size-one dims get stride 0.
std::array<int64_t, kMaxRank> broadcast_strides(const Tensor& t, int out_rank);

// Resizes `out` to `shape`, naming the op on failure.
Status resize_output(const KernelContext& ctx, Tensor& out, const Shape& shape);

// Visits every element of a tensor of `shape` in C (row-major) order, calling
// f(offsets) with one element offset per stride set.
template <size_t N, typename F>
void for_each_index(const Shape& shape, const std::array<const int64_t*, N>& strides, F&& f) {
  int64_t numel = 1;
  for (int d = 0; d < shape.rank; ++d) numel *= shape.sizes[d];
  if (numel == 0) return;
  std::array<int64_t, kMaxRank> index{};
  std::array<int64_t, N> offset{};
  for (int64_t i = 0; i < numel; ++i) {
    f(offset);
    for (int d = shape.rank - 1; d >= 0; --d) {
      if (++index[d] < shape.sizes[d]) {
        for (size_t k = 0; k < N; ++k) offset[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) offset[k] -= strides[k][d] * (shape.sizes[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace et::kernels
