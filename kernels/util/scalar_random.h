// Random numbers for aten::rand.out and aten::randn.out. Not reproducible and not
// PyTorch's generator: programs may rely only on the distribution. Each thread has its
// own generator, seeded once from the clock, the thread and a process-wide counter.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/util/scalar_creation.h"

namespace et::kernels {

// splitmix64: small, fast and good enough for sampling (not for secrets).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

inline SplitMix64& thread_generator() {
  static std::atomic<uint64_t> counter{0};
  thread_local SplitMix64 gen(
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (counter.fetch_add(1) * 0xD1B54A32D192ED03ull) ^ reinterpret_cast<uintptr_t>(&counter));
  return gen;
}

// Uniform in [0, 1) with the precision T holds exactly (its mantissa digits), as
// PyTorch's uniform_real_distribution draws it: never rounds up to 1.
template <typename T>
double uniform01(SplitMix64& gen) {
  int digits = 53;
  if constexpr (std::is_same_v<T, Half>) digits = 11;
  if constexpr (std::is_same_v<T, BFloat16>) digits = 8;
  if constexpr (std::is_same_v<T, float>) digits = 24;
  return static_cast<double>(gen.next() >> (64 - digits)) * std::ldexp(1.0, -digits);
}

// Standard normal by Box-Muller in double.
inline double standard_normal(SplitMix64& gen) {
  const double u1 = 1.0 - uniform01<double>(gen);  // (0, 1]: log stays finite
  const double u2 = uniform01<double>(gen);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

// aten::rand.out / aten::randn.out(SymInt[] size, *, Tensor(a!) out): floating dtypes
// only (as in PyTorch).
template <bool kNormal>
Status random_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(auto sizes, ctx.int_list_arg(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (!is_floating(out->dtype())) {
    return ctx.fail(fmt::format("random values need a floating-point output, not {}",
                                scalar_type_name(out->dtype())));
  }
  ET_RETURN_IF_ERROR(resize_to_sizes(ctx, *out, sizes));
  SplitMix64& gen = thread_generator();
  visit_dtype(out->dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T> || is_half_type_v<T>) {
      T* p = out->data_as<T>();
      for (int64_t i = 0; i < out->numel(); ++i) {
        p[i] = convert_value<T>(kNormal ? standard_normal(gen) : uniform01<T>(gen));
      }
    }
  });
  return Status();
}

}  // namespace et::kernels
