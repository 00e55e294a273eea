// for_each_index, which every elementwise, gather and copy kernel walks with, against a
// plain enumeration: the same offsets in the same (C) order for shapes with size-one,
// size-zero and broadcast (stride 0) dims, negative strides, merged and unmerged dims.
#include "kernels/util/shape_util.h"

#include <gtest/gtest.h>

#include <vector>

namespace et::kernels {
namespace {

template <size_t N>
std::vector<std::array<int64_t, N>> reference(const Shape& shape,
                                              const std::array<const int64_t*, N>& strides) {
  int64_t numel = 1;
  for (int d = 0; d < shape.rank; ++d) numel *= shape.sizes[d];
  std::vector<std::array<int64_t, N>> visits;
  for (int64_t flat = 0; flat < numel; ++flat) {
    std::array<int64_t, N> offset{};
    int64_t rest = flat;
    for (int d = shape.rank - 1; d >= 0; --d) {
      const int64_t i = rest % shape.sizes[d];
      rest /= shape.sizes[d];
      for (size_t k = 0; k < N; ++k) offset[k] += i * strides[k][d];
    }
    visits.push_back(offset);
  }
  return visits;
}

template <size_t N>
void expect_same_visits(const Shape& shape, const std::array<const int64_t*, N>& strides) {
  std::vector<std::array<int64_t, N>> got;
  for_each_index<N>(shape, strides, [&](const std::array<int64_t, N>& o) { got.push_back(o); });
  EXPECT_EQ(got, reference<N>(shape, strides)) << "rank " << shape.rank;
}

TEST(ForEachIndex, VisitsWhatAPlainEnumerationVisitsInOrder) {
  // dense [2, 3, 4] against itself (merges to one dim) and a permuted layout (no merge)
  const Shape s234{{2, 3, 4}, 3};
  const int64_t dense[] = {12, 4, 1}, permuted[] = {1, 8, 2};
  expect_same_visits<2>(s234, {dense, dense});
  expect_same_visits<2>(s234, {dense, permuted});
  // broadcast: a [3, 1] operand (stride 0 along the last dim) and a scalar-like one
  const int64_t column[] = {0, 1, 0}, scalar[] = {0, 0, 0};
  expect_same_visits<3>(s234, {dense, column, scalar});
  // size-one dims between others, a negative stride (a flip), three stride sets
  const Shape s1{{3, 1, 5, 1, 2}, 5};
  const int64_t a[] = {10, 10, 2, 2, 1}, flip[] = {10, 99, -2, 7, 1}, b[] = {1, 0, 3, 0, 15};
  expect_same_visits<3>(s1, {a, flip, b});
  // only size-one dims: one visit at offset 0; rank 0 likewise
  const Shape ones{{1, 1}, 2};
  expect_same_visits<1>(ones, {dense});
  expect_same_visits<1>(Shape{}, {dense});
  // a size-zero dim: no visit at all
  const Shape empty{{3, 0, 2}, 3};
  expect_same_visits<1>(empty, {dense});
}

}  // namespace
}  // namespace et::kernels
