// The CPU math kernels by ISA, beside their plain alternatives: sgemm on every ISA the
// CPU has against a plain triple loop, vector_math's functions against libm, and a
// transpose through strided_copy, int4_gemm's kernels one thread at a time (a decode
// step's linear layers). Google Benchmark; run after scripts/build:
//
//   build/benchmarks/kernels-bench [--benchmark_filter=Sgemm]
//
// Timings only (no assertions): the kernels' correctness is kernels/*_test.cc's.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/math/int4_gemm.h"
#include "kernels/math/packed_sgemm.h"
#include "kernels/math/sgemm.h"
#include "kernels/math/transpose.h"
#include "kernels/math/transpose_impl.h"
#include "kernels/math/vector_math.h"
#include "kernels/util/copy_util.h"
#include "runtime/core/thread_pool.h"

namespace et::kernels {
namespace {

std::vector<float> values(size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  return v;
}

// C[m, n] = A[m, k] W[n, k]^T, as a linear layer multiplies.
void plain_linear(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const std::vector<float> a = values(m * k), w = values(n * k);
  std::vector<float> c(m * n);
  for (auto _ : state) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float s = 0;
        for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * w[j * k + p];
        c[i * n + j] = s;
      }
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void sgemm_linear(benchmark::State& state, CpuIsa isa) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const std::vector<float> a = values(m * k), w = values(n * k);
  std::vector<float> c(m * n);
  for (auto _ : state) {
    sgemm_on(isa, {m, n, k, a.data(), k, w.data(), k, true, c.data(), n, false});
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// The same products against weights packed beforehand (packed_sgemm.h), on one thread.
void packed_linear(benchmark::State& state, CpuIsa isa) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const std::vector<float> a = values(m * k), w = values(n * k);
  const PackedWeights packed = pack_weights(w.data(), n, k, false, isa);
  std::vector<float> c(m * n);
  ThreadPool& pool = ThreadPool::global();
  const size_t threads = pool.threads();
  pool.set_threads(1);
  for (auto _ : state) {
    packed_sgemm(m, a.data(), k, packed, nullptr, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  pool.set_threads(threads);
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// Decode step, attention-sized, a ViT MLP, a large square, an LLM's prefill (34 tokens,
// dim 512, hidden 1536) in and out of its feed-forward layer, and a decode step and
// prefill on 32 MB of weights (beyond the L2 cache, as a model's layers are).
void gemm_shapes(benchmark::internal::Benchmark* b) {
  for (auto s : std::vector<std::vector<int64_t>>{{1, 2048, 512},
                                                  {17, 17, 64},
                                                  {65, 384, 96},
                                                  {256, 256, 256},
                                                  {34, 1536, 512},
                                                  {34, 512, 1536},
                                                  {1, 8192, 1024},
                                                  {34, 8192, 1024},
                                                  {1, 16384, 2048}}) {
    b->Args(s);
  }
}

void libm_gelu(benchmark::State& state) {
  const std::vector<float> x = values(state.range(0), 4.0f);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    for (size_t i = 0; i < x.size(); ++i) {
      y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678f));
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void libm_tanh(benchmark::State& state) {
  const std::vector<float> x = values(state.range(0), 4.0f);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    for (size_t i = 0; i < x.size(); ++i) y[i] = std::tanh(x[i]);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void array_function(benchmark::State& state, void (*f)(CpuIsa, const float*, float*, int64_t),
                    CpuIsa isa) {
  const std::vector<float> x = values(state.range(0), 4.0f);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    f(isa, x.data(), y.data(), static_cast<int64_t>(x.size()));
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// [rows, cols] -> [cols, rows], float: a weight permute or a KV-cache transpose.
void transpose_copy(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  const std::vector<float> in = values(rows * cols);
  std::vector<float> out(in.size());
  const Shape shape{{cols, rows}, 2};
  const int64_t src[] = {1, cols}, dst[] = {rows, 1};
  for (auto _ : state) {
    strided_copy(shape, in.data(), src, out.data(), dst, sizeof(float));
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * rows * cols * 4);
}

// The plane transpose alone, by `transpose(in, out, rows, cols)`: the tiled plain C++
// one, and AVX2's 8x8 shuffles.
template <typename Transpose>
void transpose_plane_with(benchmark::State& state, Transpose transpose) {
  const int64_t rows = state.range(0), cols = state.range(1);
  const std::vector<float> in = values(rows * cols);
  std::vector<float> out(in.size());
  for (auto _ : state) {
    transpose(reinterpret_cast<const uint32_t*>(in.data()), reinterpret_cast<uint32_t*>(out.data()),
              rows, cols);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * rows * cols * 4);
}

void transpose_plain(benchmark::State& state) {
  transpose_plane_with(state, [](const uint32_t* in, uint32_t* out, int64_t rows, int64_t cols) {
    detail::transpose_tiles(in, cols, out, rows, 0, rows, 0, cols);
  });
}

void transpose_avx2(benchmark::State& state) {
  transpose_plane_with(state, [](const uint32_t* in, uint32_t* out, int64_t rows, int64_t cols) {
    detail::transpose_plane32_avx2(in, cols, out, rows, rows, cols);
  });
}

// One call of an int4_gemm kernel on `rows` activation rows against every weight row
// (one thread): weights random in [-8, 7], groups of range(3).
// Scrambled n x k int4 weights in groups of `group`, packed.
Int4Weights bench_int4_weights(size_t n, size_t k, size_t group) {
  std::vector<uint8_t> qbint4(n * k / 2);
  for (size_t i = 0; i < qbint4.size(); ++i)
    qbint4[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  const std::vector<float> scales = values(n * (k / group), 0.01f);
  return pack_int4_weights(qbint4.data(), n, k, group, scales);
}

void int4_rows(benchmark::State& state, detail::Int4RowsFn fn) {
  const auto rows = static_cast<size_t>(state.range(0)), n = static_cast<size_t>(state.range(1));
  const auto k = static_cast<size_t>(state.range(2)), group = static_cast<size_t>(state.range(3));
  const Int4Weights w = bench_int4_weights(n, k, group);
  std::vector<int8_t> x(rows * k);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i * 37 % 255 - 127);
  std::vector<int8_t> xp;
  std::vector<int32_t> corr;
  detail::prepare_int4_activations(rows, x.data(), w, xp, corr);
  std::vector<float> sums(rows * n);
  for (auto _ : state) {
    fn(xp.data(), corr.data(), rows, w, 0, n, sums.data(), n);
    benchmark::DoNotOptimize(sums.data());
  }
  state.counters["Gweights/s"] =
      benchmark::Counter(static_cast<double>(n * k), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

// The whole product (int4_gemm_with: activations prepared, every row tile, the scales and
// bias applied) on one thread: a 34-token prefill of a Llama layer goes to the panel path
// on AVX-512 VNNI.
void int4_product(benchmark::State& state, detail::Int4RowsFn fn) {
  const auto m = static_cast<size_t>(state.range(0)), n = static_cast<size_t>(state.range(1));
  const auto k = static_cast<size_t>(state.range(2)), group = static_cast<size_t>(state.range(3));
  const Int4Weights w = bench_int4_weights(n, k, group);
  std::vector<int8_t> x(m * k);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i * 37 % 255 - 127);
  const std::vector<RowQuantization> rows(m, RowQuantization{0.02f, 3});
  std::vector<float> y(m * n);
  ThreadPool& pool = ThreadPool::global();
  const size_t threads = pool.threads();
  pool.set_threads(1);
  for (auto _ : state) {
    detail::int4_gemm_with(fn, m, x.data(), rows, w, nullptr, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  pool.set_threads(threads);
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(m * n * k),
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

// A Llama decode step's layers (dim 512, hidden 1536; the output layer), one row and four.
void int4_shapes(benchmark::internal::Benchmark* b) {
  b->Args({1, 1536, 512, 32})->Args({1, 512, 1536, 32})->Args({1, 4096, 512, 32});
  b->Args({1, 1536, 512, 128})->Args({4, 1536, 512, 32});
  b->Args({1, 32768, 512, 32});  // 8 MiB of weights: from memory, not the caches
}

int register_all() {
  for (const auto& [name, fn] : detail::available_int4_rows()) {
    benchmark::RegisterBenchmark((std::string("Int4Rows/") + name).c_str(), int4_rows, fn)
        ->Apply(int4_shapes);
    benchmark::RegisterBenchmark((std::string("Int4Product/") + name).c_str(), int4_product, fn)
        ->Args({34, 1536, 512, 32})
        ->Args({34, 512, 1536, 32});
  }
  benchmark::RegisterBenchmark("Linear/plain_loops", plain_linear)->Apply(gemm_shapes);
  for (CpuIsa isa : available_isas()) {
    const std::string name = isa_name(isa);
    benchmark::RegisterBenchmark(("Linear/sgemm_" + name).c_str(), sgemm_linear, isa)
        ->Apply(gemm_shapes);
    benchmark::RegisterBenchmark(("Linear/packed_" + name).c_str(), packed_linear, isa)
        ->Apply(gemm_shapes);
    benchmark::RegisterBenchmark(("Gelu/" + name).c_str(), array_function, gelu_array_on, isa)
        ->Arg(65536);
    benchmark::RegisterBenchmark(("Tanh/" + name).c_str(), array_function, tanh_array_on, isa)
        ->Arg(65536);
  }
  benchmark::RegisterBenchmark("Gelu/libm", libm_gelu)->Arg(65536);
  benchmark::RegisterBenchmark("Tanh/libm", libm_tanh)->Arg(65536);
  benchmark::RegisterBenchmark("StridedCopy/transpose", transpose_copy)
      ->Args({256, 1024})
      ->Args({64, 4096});
  benchmark::RegisterBenchmark("Transpose/plain", transpose_plain)->Args({256, 1024});
  for (CpuIsa isa : available_isas()) {
    if (isa == CpuIsa::kAvx2) {
      benchmark::RegisterBenchmark("Transpose/avx2", transpose_avx2)->Args({256, 1024});
    }
  }
  return 0;
}

const int registered = register_all();

}  // namespace
}  // namespace et::kernels

BENCHMARK_MAIN();
