// Shapes, broadcasting and strided iteration shared by the kernels.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "runtime/core/kernel.h"
#include "runtime/core/tensor.h"

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
// f(offsets) with one element offset per stride set. Size-one dims are dropped and
// neighbouring dims merged where every stride set runs from one into the other (the
// order of visits is unchanged), and the innermost dim is walked in a tight loop.
template <size_t N, typename F>
void for_each_index(const Shape& shape, const std::array<const int64_t*, N>& strides, F&& f) {
  Shape s;
  std::array<std::array<int64_t, kMaxRank>, N> st{};
  for (int d = 0; d < shape.rank; ++d) {
    if (shape.sizes[d] == 0) return;
    if (shape.sizes[d] == 1) continue;
    bool merges = s.rank > 0;
    for (size_t k = 0; k < N && merges; ++k) {
      merges = st[k][s.rank - 1] == strides[k][d] * shape.sizes[d];
    }
    if (merges) {
      s.sizes[s.rank - 1] *= shape.sizes[d];
      for (size_t k = 0; k < N; ++k) st[k][s.rank - 1] = strides[k][d];
      continue;
    }
    s.sizes[s.rank] = shape.sizes[d];
    for (size_t k = 0; k < N; ++k) st[k][s.rank] = strides[k][d];
    ++s.rank;
  }
  std::array<int64_t, N> offset{};
  if (s.rank == 0) {
    f(offset);
    return;
  }
  const int inner = s.rank - 1;
  const int64_t n = s.sizes[inner];
  std::array<int64_t, N> step{};
  for (size_t k = 0; k < N; ++k) step[k] = st[k][inner];
  std::array<int64_t, kMaxRank> index{};
  for (;;) {
    for (int64_t j = 0; j < n; ++j) {
      f(offset);
      for (size_t k = 0; k < N; ++k) offset[k] += step[k];
    }
    for (size_t k = 0; k < N; ++k) offset[k] -= step[k] * n;
    int d = inner - 1;
    for (; d >= 0; --d) {
      if (++index[d] < s.sizes[d]) {
        for (size_t k = 0; k < N; ++k) offset[k] += st[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) offset[k] -= st[k][d] * (s.sizes[d] - 1);
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace et::kernels
