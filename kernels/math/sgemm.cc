#include "kernels/math/sgemm.h"

#include <vector>

#include "kernels/math/sgemm_blocked.h"
#include "runtime/core/thread_pool.h"

namespace et::kernels {
namespace detail {

#if ET_CPU_X86
void sgemm_avx2(const SgemmArgs& args, bool rows_path);
void sgemm_avx512(const SgemmArgs& args, bool rows_path);
#endif

float* sgemm_scratch(int64_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < static_cast<size_t>(floats)) buffer.resize(static_cast<size_t>(floats));
  return buffer.data();
}

namespace {

// Plain C++ for any CPU: a 4 x 8 tile the compiler vectorises for the baseline ISA.
struct Portable {
  static constexpr int kMr = 4, kNr = 8, kKc = 256, kMc = 64, kNc = 512;

  template <int R, bool kRowsA>
  static void tile(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                   bool accumulate) {
    float t[R][kNr] = {};
    for (int64_t p = 0; p < kc; ++p) {
      for (int i = 0; i < R; ++i) {
        const float x = a[kRowsA ? i * lda + p : p * kMr + i];
        for (int j = 0; j < kNr; ++j) t[i][j] += x * b[p * kNr + j];
      }
    }
    for (int i = 0; i < R; ++i) {
      for (int j = 0; j < kNr; ++j)
        c[i * ldc + j] = accumulate ? c[i * ldc + j] + t[i][j] : t[i][j];
    }
  }

  static void row(int64_t k, const float* a, const float* b, int64_t ldb, int64_t n, float* c,
                  bool accumulate) {
    constexpr int64_t kChunk = 64;
    float s[kChunk];
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
      const int64_t w = lesser(kChunk, n - j0);
      for (int64_t j = 0; j < w; ++j) s[j] = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float x = a[p];
        const float* r = b + p * ldb + j0;
        for (int64_t j = 0; j < w; ++j) s[j] += x * r[j];
      }
      for (int64_t j = 0; j < w; ++j) c[j0 + j] = accumulate ? c[j0 + j] + s[j] : s[j];
    }
  }

  // Dot products in 8 interleaved partial sums (lane l takes p = l mod 8), then the lanes
  // in order: the compiler vectorises the lanes without reordering any sum.
  static void row_transposed(int64_t k, const float* a, const float* b, int64_t ldb, int64_t n,
                             float* c, bool accumulate) {
    constexpr int64_t kLanes = 8;
    const int64_t k_main = k / kLanes * kLanes;
    for (int64_t j = 0; j < n; ++j) {
      const float* column = b + j * ldb;
      float lanes[kLanes] = {};
      for (int64_t p = 0; p < k_main; p += kLanes) {
        for (int64_t l = 0; l < kLanes; ++l) lanes[l] += a[p + l] * column[p + l];
      }
      float s = 0.0f;
      for (int64_t l = 0; l < kLanes; ++l) s += lanes[l];
      for (int64_t p = k_main; p < k; ++p) s += a[p] * column[p];
      c[j] = accumulate ? c[j] + s : s;
    }
  }
};

}  // namespace

void sgemm_portable(const SgemmArgs& args, bool rows_path) {
  blocked_sgemm<Portable>(args, rows_path);
}

PackedKernel packed_kernel_portable() {
  return {Portable::kMr, Portable::kNr, &packed_panels<Portable>};
}

}  // namespace detail

namespace {

void run(CpuIsa isa, const SgemmArgs& args, bool rows_path) {
  switch (isa) {
#if ET_CPU_X86
    case CpuIsa::kAvx512:
      return detail::sgemm_avx512(args, rows_path);
    case CpuIsa::kAvx2:
      return detail::sgemm_avx2(args, rows_path);
#endif
    default:
      return detail::sgemm_portable(args, rows_path);
  }
}

}  // namespace

void sgemm_on(CpuIsa isa, const SgemmArgs& args) { run(isa, args, args.m <= detail::kSmallRows); }

void sgemm(const SgemmArgs& args) { sgemm_on(selected_isa(), args); }

void parallel_sgemm(const SgemmArgs& args) {
  // Rows and columns go to threads in whole register tiles of every ISA (24 = 6 x 4 = 8 x 3
  // rows, 32 columns), so a split adds no edge tiles.
  constexpr int64_t kRowUnit = 24, kColumnUnit = 32;
  const CpuIsa isa = selected_isa();
  const bool rows_path = args.m <= detail::kSmallRows;
  ThreadPool& pool = ThreadPool::global();
  if (pool.threads() < 2 || args.m * args.n * args.k < (int64_t{1} << 16)) {
    return run(isa, args, rows_path);
  }
  if (args.m >= 2 * kRowUnit) {
    const auto units = static_cast<size_t>((args.m + kRowUnit - 1) / kRowUnit);
    pool.parallel_for(units, 1, [&](size_t u0, size_t u1) {
      SgemmArgs part = args;
      const auto begin = static_cast<int64_t>(u0) * kRowUnit;
      part.m = detail::lesser(static_cast<int64_t>(u1) * kRowUnit, args.m) - begin;
      part.a += begin * args.lda;
      part.c += begin * args.ldc;
      run(isa, part, rows_path);
    });
    return;
  }
  const auto units = static_cast<size_t>((args.n + kColumnUnit - 1) / kColumnUnit);
  if (units < 2) return run(isa, args, rows_path);
  pool.parallel_for(units, 1, [&](size_t u0, size_t u1) {
    SgemmArgs part = args;
    const auto begin = static_cast<int64_t>(u0) * kColumnUnit;
    part.n = detail::lesser(static_cast<int64_t>(u1) * kColumnUnit, args.n) - begin;
    part.b += args.b_transposed ? begin * args.ldb : begin;
    part.c += begin;
    run(isa, part, rows_path);
  });
}

}  // namespace et::kernels
