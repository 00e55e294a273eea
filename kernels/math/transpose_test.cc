#include "kernels/math/transpose.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/math/cpu_isa.h"

namespace et::kernels {
namespace {

struct Plane {
  int64_t rows, cols;
};

// Planes with and without whole 8x8 blocks, and ragged edges on either side.
const Plane kPlanes[] = {{1, 1},   {7, 9},  {8, 8},  {16, 8},  {8, 16},
                         {17, 33}, {64, 3}, {3, 64}, {100, 37}};

// Transposes a plane whose input and output lines carry padding (strides longer than
// the lines) and checks every element, and that the padding is left alone.
template <typename T, typename Transpose>
void check_plane(Plane p, Transpose transpose) {
  const int64_t in_stride = p.cols + 3, out_stride = p.rows + 5;
  std::vector<T> in(static_cast<size_t>(p.rows * in_stride));
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(i * 2654435761u + 1);
  const T pad = static_cast<T>(0x5a5a5a5a5a5a5a5aull);
  std::vector<T> out(static_cast<size_t>(p.cols * out_stride), pad);
  transpose(in.data(), in_stride, out.data(), out_stride, p.rows, p.cols);
  for (int64_t c = 0; c < p.cols; ++c) {
    for (int64_t r = 0; r < out_stride; ++r) {
      const T want = r < p.rows ? in[static_cast<size_t>(r * in_stride + c)] : pad;
      ASSERT_EQ(out[static_cast<size_t>(c * out_stride + r)], want)
          << p.rows << "x" << p.cols << " element size " << sizeof(T) << ", out row " << c
          << " col " << r;
    }
  }
}

template <typename T>
void check_every_plane() {
  for (Plane p : kPlanes) {
    check_plane<T>(p, [](const T* in, int64_t is, T* out, int64_t os, int64_t rows, int64_t cols) {
      ASSERT_TRUE(transpose_plane(in, is, out, os, rows, cols, sizeof(T)));
    });
  }
}

TEST(Transpose, EveryElementSizeMovesEveryElementAndNothingElse) {
  check_every_plane<uint8_t>();
  check_every_plane<uint16_t>();
  check_every_plane<uint32_t>();
  check_every_plane<uint64_t>();
}

TEST(Transpose, Avx2PathMatchesThePlainOne) {
  const auto isas = available_isas();
  if (std::find(isas.begin(), isas.end(), CpuIsa::kAvx2) == isas.end()) {
    GTEST_SKIP() << "this CPU has no AVX2";
  }
  for (Plane p : kPlanes) check_plane<uint32_t>(p, detail::transpose_plane32_avx2);
}

TEST(Transpose, OtherElementSizesAreRefused) {
  uint8_t in[12] = {}, out[12] = {};
  EXPECT_FALSE(transpose_plane(in, 1, out, 1, 1, 1, 3));
}

}  // namespace
}  // namespace et::kernels
