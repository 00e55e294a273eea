// Dense row-major working copies of tensors, for kernels (matmul, convolution,
// normalisation) that compute on plain arrays and write the result back in the
// output's own dtype and dim order.
#pragma once

#include "kernels/math/sgemm.h"
#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"
#include "kernels/util/elementwise.h"
#include "runtime/core/thread_pool.h"

namespace et::kernels {

// t's values, converted to C, row-major. Points into t when it already is that.
template <typename C>
Result<const C*> dense_as(const KernelContext& ctx, const Tensor& t) {
  if (t.dtype() == scalar_type_of<C>() && t.is_contiguous()) return t.data_as<const C>();
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(static_cast<size_t>(t.numel()) * sizeof(C) + 1));
  const Shape shape = shape_of(t);
  const std::array<int64_t, kMaxRank> row_major = row_major_strides(shape);
  if (t.numel() > 0) {
    ET_RETURN_IF_ERROR(gather_as<C>(ctx, t, shape,
                                    {row_major.data(), static_cast<size_t>(shape.rank)},
                                    static_cast<C*>(scratch)));
  }
  return static_cast<const C*>(scratch);
}

// dense_as for an optional tensor: nullptr when absent.
template <typename C>
Result<const C*> optional_dense_as(const KernelContext& ctx, const Tensor* t) {
  if (t == nullptr) return static_cast<const C*>(nullptr);
  return dense_as<C>(ctx, *t);
}

// A row-major result buffer for `out` (already sized): out's memory when it is
// contiguous of type C, else scratch that store_dense() writes back.
template <typename C>
Result<C*> dense_result(const KernelContext& ctx, Tensor& out) {
  if (out.dtype() == scalar_type_of<C>() && out.is_contiguous()) return out.data_as<C>();
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(static_cast<size_t>(out.numel()) * sizeof(C) + 1));
  return static_cast<C*>(scratch);
}

template <typename C>
Status store_dense(const KernelContext& ctx, const C* values, Tensor& out) {
  if (static_cast<const void*>(values) == out.data() || out.numel() == 0) return Status();
  const Shape shape = shape_of(out);
  const std::array<int64_t, kMaxRank> row_major = row_major_strides(shape);
  if (!convert_strided(shape, scalar_type_of<C>(), values, row_major.data(), out.dtype(),
                       out.mutable_data(), out.strides().data())) {
    return ctx.unsupported("output dtype is not supported");
  }
  return Status();
}

// C[m, n] (+)= A[m, k] * B[k, n], all row-major with leading dimensions lda, ldb, ldc.
// float goes to sgemm (kernels/math/sgemm.h); other types four rows of C at a time, so each
// row of B is loaded once for all four.
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
          int64_t ldc, bool accumulate) {
  if constexpr (std::is_same_v<T, float>) {
    return sgemm({m, n, k, a, lda, b, ldb, false, c, ldc, accumulate});
  }
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    T* r0 = c + i * ldc;
    T* r1 = r0 + ldc;
    T* r2 = r1 + ldc;
    T* r3 = r2 + ldc;
    if (!accumulate) {
      std::fill(r0, r0 + n, T(0));
      std::fill(r1, r1 + n, T(0));
      std::fill(r2, r2 + n, T(0));
      std::fill(r3, r3 + n, T(0));
    }
    for (int64_t p = 0; p < k; ++p) {
      const T x0 = a[i * lda + p], x1 = a[(i + 1) * lda + p], x2 = a[(i + 2) * lda + p],
              x3 = a[(i + 3) * lda + p];
      const T* brow = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) {
        const T v = brow[j];
        r0[j] += x0 * v;
        r1[j] += x1 * v;
        r2[j] += x2 * v;
        r3[j] += x3 * v;
      }
    }
  }
  for (; i < m; ++i) {
    T* row = c + i * ldc;
    if (!accumulate) std::fill(row, row + n, T(0));
    for (int64_t p = 0; p < k; ++p) {
      const T x = a[i * lda + p];
      const T* brow = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) row[j] += x * brow[j];
    }
  }
}

// C[m, n] = A[m, k] * B[n, k]^T: B given row by row with k contiguous (a linear layer's
// weight), so no transpose is made. float goes to sgemm; for other types each C element
// is a dot product summed in kLanes interleaved partial sums (lane l takes p = l mod
// kLanes), then the lanes in order: the compiler vectorises the lanes without reordering
// any sum. Four columns at a time share each load of A's row.
template <typename T>
void gemm_nt(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
             T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    return sgemm({m, n, k, a, lda, b, ldb, true, c, ldc, false});
  }
  constexpr int64_t kLanes = 8;
  const int64_t k_main = k / kLanes * kLanes;
  auto finish = [&](const T* lanes, const T* arow, const T* brow) {
    T sum = 0;
    for (int64_t l = 0; l < kLanes; ++l) sum += lanes[l];
    for (int64_t p = k_main; p < k; ++p) sum += arow[p] * brow[p];
    return sum;
  };
  for (int64_t i = 0; i < m; ++i) {
    const T* arow = a + i * lda;
    T* crow = c + i * ldc;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const T* b0 = b + j * ldb;
      const T* b1 = b0 + ldb;
      const T* b2 = b1 + ldb;
      const T* b3 = b2 + ldb;
      T l0[kLanes] = {}, l1[kLanes] = {}, l2[kLanes] = {}, l3[kLanes] = {};
      for (int64_t p = 0; p < k_main; p += kLanes) {
        for (int64_t l = 0; l < kLanes; ++l) {
          const T x = arow[p + l];
          l0[l] += x * b0[p + l];
          l1[l] += x * b1[p + l];
          l2[l] += x * b2[p + l];
          l3[l] += x * b3[p + l];
        }
      }
      crow[j] = finish(l0, arow, b0);
      crow[j + 1] = finish(l1, arow, b1);
      crow[j + 2] = finish(l2, arow, b2);
      crow[j + 3] = finish(l3, arow, b3);
    }
    for (; j < n; ++j) {
      const T* brow = b + j * ldb;
      T lanes[kLanes] = {};
      for (int64_t p = 0; p < k_main; p += kLanes) {
        for (int64_t l = 0; l < kLanes; ++l) lanes[l] += arow[p + l] * brow[p + l];
      }
      crow[j] = finish(lanes, arow, brow);
    }
  }
}

// gemm_nt, with the work split across the process's threads when the product is large:
// by rows of C when there are several, else by columns (one row: a decode step).
template <typename T>
void parallel_gemm_nt(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                      int64_t ldb, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    return parallel_sgemm({m, n, k, a, lda, b, ldb, true, c, ldc, false});
  }
  if (m * n * k < (int64_t{1} << 16)) {
    gemm_nt(m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  if (m >= 4) {
    ThreadPool::global().parallel_for(static_cast<size_t>(m), 1, [&](size_t r0, size_t r1) {
      const auto begin = static_cast<int64_t>(r0), rows = static_cast<int64_t>(r1 - r0);
      gemm_nt(rows, n, k, a + begin * lda, lda, b, ldb, c + begin * ldc, ldc);
    });
    return;
  }
  ThreadPool::global().parallel_for(static_cast<size_t>(n), 4, [&](size_t c0, size_t c1) {
    const auto begin = static_cast<int64_t>(c0), cols = static_cast<int64_t>(c1 - c0);
    gemm_nt(m, cols, k, a, lda, b + begin * ldb, ldb, c + begin, ldc);
  });
}

// gemm, with rows split across the process's threads when the product is large.
template <typename T>
void parallel_gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                   int64_t ldb, T* c, int64_t ldc, bool accumulate) {
  if constexpr (std::is_same_v<T, float>) {
    return parallel_sgemm({m, n, k, a, lda, b, ldb, false, c, ldc, accumulate});
  }
  if (m < 2 || m * n * k < (int64_t{1} << 16)) {
    gemm(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
    return;
  }
  ThreadPool::global().parallel_for(static_cast<size_t>(m), 1, [&](size_t r0, size_t r1) {
    const auto begin = static_cast<int64_t>(r0), rows = static_cast<int64_t>(r1 - r0);
    gemm(rows, n, k, a + begin * lda, lda, b, ldb, c + begin * ldc, ldc, accumulate);
  });
}

}  // namespace et::kernels
