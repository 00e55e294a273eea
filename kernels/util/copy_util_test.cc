// strided_copy, which every view-like kernel uses, against an element-by-element copy:
// permutations (merged runs and single-element lines), size-one dims, reversed strides
// (flip), transposes copied in tiles, every element size, and blocks that overlap.
#include "kernels/util/copy_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

namespace et::kernels {
namespace {

// The element offsets of `index` under `strides`.
int64_t offset(const std::array<int64_t, kMaxRank>& index, const int64_t* strides, int rank) {
  int64_t o = 0;
  for (int d = 0; d < rank; ++d) o += index[d] * strides[d];
  return o;
}

void expect_same_as_elementwise(const Shape& shape, const int64_t* src_strides, int64_t src_base,
                                const int64_t* dst_strides, size_t elsize) {
  int64_t numel = 1;
  for (int d = 0; d < shape.rank; ++d) numel *= shape.sizes[d];
  const size_t span = static_cast<size_t>(4 * numel + 8) * elsize;
  std::vector<uint8_t> src(span), got(span, 0xee), want(span, 0xee);
  std::iota(src.begin(), src.end(), uint8_t{1});
  strided_copy(shape, src.data() + src_base * static_cast<int64_t>(elsize), src_strides, got.data(),
               dst_strides, elsize);
  std::array<int64_t, kMaxRank> index{};
  for (int64_t i = 0; i < numel; ++i) {
    const int64_t from = src_base + offset(index, src_strides, shape.rank);
    std::memcpy(want.data() + offset(index, dst_strides, shape.rank) * elsize,
                src.data() + from * static_cast<int64_t>(elsize), elsize);
    for (int d = shape.rank - 1; d >= 0 && ++index[d] == shape.sizes[d]; --d) index[d] = 0;
  }
  EXPECT_EQ(got, want) << "elsize " << elsize;
}

TEST(StridedCopy, MatchesAnElementByElementCopy) {
  for (size_t elsize : {1, 2, 4, 8, 16}) {
    // [2, 3, 4] read through a [4, 2, 3]-contiguous source (a permute)
    Shape permuted{{2, 3, 4}, 3};
    const int64_t perm_src[] = {3, 1, 6}, dense[] = {12, 4, 1};
    expect_same_as_elementwise(permuted, perm_src, 0, dense, elsize);
    // [2, 1, 3, 5] with the last two dims contiguous in both: merged into runs
    Shape merged{{2, 1, 3, 5}, 4};
    const int64_t merged_src[] = {15, 15, 5, 1}, merged_dst[] = {30, 15, 5, 1};
    expect_same_as_elementwise(merged, merged_src, 0, merged_dst, elsize);
    // a flip of the last dim: negative stride from the end of each row
    Shape flipped{{3, 4}, 2};
    const int64_t flip_src[] = {4, -1}, flip_dst[] = {4, 1};
    expect_same_as_elementwise(flipped, flip_src, 3, flip_dst, elsize);
    // a transpose of a [5, 7] matrix
    Shape transposed{{7, 5}, 2};
    const int64_t t_src[] = {1, 7}, t_dst[] = {5, 1};
    expect_same_as_elementwise(transposed, t_src, 0, t_dst, elsize);
    // transposes larger than one tile, alone and under an outer dim (tiled copies)
    Shape big{{37, 40}, 2};
    const int64_t big_src[] = {1, 37}, big_dst[] = {40, 1};
    expect_same_as_elementwise(big, big_src, 0, big_dst, elsize);
    Shape batched{{3, 18, 20}, 3};
    const int64_t batched_src[] = {360, 1, 18}, batched_dst[] = {360, 20, 1};
    expect_same_as_elementwise(batched, batched_src, 0, batched_dst, elsize);
    // only size-one dims: one element
    Shape ones{{1, 1}, 2};
    const int64_t one_strides[] = {1, 1};
    expect_same_as_elementwise(ones, one_strides, 0, one_strides, elsize);
  }
}

// A corrupted program can plan an op's output over its input. The copy must then be a
// defined move (the source as it was before the copy), never undefined behaviour; under
// ASan a memcpy here is reported as memcpy-param-overlap.
TEST(StridedCopy, OverlappingBlocksMoveAsMemmoveWould) {
  for (size_t elsize : {1, 2, 4, 8, 16}) {
    for (int64_t shift : {-3, 3}) {
      const int64_t n = 24;
      std::vector<uint8_t> buffer(static_cast<size_t>(n + 6) * elsize);
      std::iota(buffer.begin(), buffer.end(), uint8_t{1});
      std::vector<uint8_t> want = buffer;
      const auto el = static_cast<int64_t>(elsize);
      uint8_t* src = buffer.data() + 3 * el;
      std::memmove(want.data() + (3 + shift) * el, want.data() + 3 * el, n * elsize);
      Shape block{{4, 6}, 2};
      const int64_t dense[] = {6, 1};
      strided_copy(block, src, dense, src + shift * el, dense, elsize);
      EXPECT_EQ(buffer, want) << "elsize " << elsize << " shift " << shift;
    }
  }
}

}  // namespace
}  // namespace et::kernels
