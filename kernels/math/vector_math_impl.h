// Internal to vector_math*.cc: branch-free scalar formulas the compiler vectorises, each
// ISA's file compiling them with its own flags. Internal linkage only (see
// sgemm_blocked.h), and only builtins, no library templates, for the same reason.
#pragma once

#include <cstdint>

namespace et::kernels::detail {
namespace {

inline float select(bool c, float a, float b) { return c ? a : b; }

// exp(hi + lo) with |lo| < 2: n = round((hi + lo) / ln2), r = (hi - n ln2) + lo (ln2 in
// two parts; hi - n ln2 is exact since n ln2 is within 3 of hi, and lo keeps the bits
// that hi + lo would round away), e^r by its Taylor polynomial to r^7 (|r| <= ln2 / 2:
// truncation below 6e-9), times 2^n made in the exponent bits.
inline float exp_split(float hi, float lo) {
  const float x = hi + lo;
  const float clamped = select(x > -87.0f, select(x < 88.3f, x, 88.3f), -87.0f);
  const float n = __builtin_rintf(clamped * 1.44269504089f);
  const float r = ((hi - n * 0.693145751953125f) - n * 1.42860682030941723e-06f) + lo;
  const float p =
      1.0f + r * (1.0f + r * (0.5f + r * (1.66666667e-1f +
                                          r * (4.16666667e-2f +
                                               r * (8.33333333e-3f +
                                                    r * (1.38888889e-3f + r * 1.98412698e-4f))))));
  const auto exponent = static_cast<int32_t>(n) + 127;
  const float scale = __builtin_bit_cast(float, static_cast<uint32_t>(exponent) << 23);
  float y = p * scale;
  y = select(x < -87.33654f, 0.0f, y);
  y = select(x > 88.72283f, __builtin_inff(), y);
  return select(x != x, x, y);
}

inline float exp_formula(float x) { return exp_split(x, 0.0f); }

// erf(x) for |x| < 0.5: its Taylor series to x^13 (relative error below 1e-9).
inline float erf_small(float x) {
  const float z = x * x;
  return x * (1.12837917f +
              z * (-0.376126389f +
                   z * (0.112837917f +
                        z * (-0.0268661706f +
                             z * (0.00522397762f + z * (-0.000854832702f + z * 0.000120553f))))));
}

// erfc(v / sqrt2) for v >= 0 (GELU's tail): t exp(P(t) - a^2) with a = v / sqrt2 and
// t = 1 / (1 + a / 2), Numerical Recipes' Chebyshev fit (fractional error below 1.2e-7).
// a^2 reaches 100 where the result is still a normal float, and a float that large is
// only good to 4e-6; so a^2 = (v_hi^2 + (v - v_hi)(v + v_hi)) / 2, with v_hi v's leading
// 12 bits (its square exact), goes to exp in two parts. v is clamped to 14 (erfc(9.9) is
// 2e-44, zero in float), so +inf stays finite.
inline float erfc_scaled(float v) {
  v = select(v < 14.0f, v, 14.0f);
  const float a = v * 0.707106781f;
  const float t = 1.0f / (1.0f + 0.5f * a);
  const float p =
      -1.26551223f +
      t * (1.00002368f +
           t * (0.37409196f +
                t * (0.09678418f +
                     t * (-0.18628806f +
                          t * (0.27886807f +
                               t * (-1.13520398f +
                                    t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
  const float v_hi = __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, v) & 0xfffff000u);
  return t * exp_split(-0.5f * (v_hi * v_hi), p - 0.5f * ((v - v_hi) * (v + v_hi)));
}

// tanh(x): for |x| < 0.3 its Taylor series to x^13 (relative error below 1e-8); beyond,
// 1 - 2 / (exp(2|x|) + 1) with x's sign (at most 2 bits lost to the subtraction at 0.3,
// none from 1). Large |x| gives exp = inf and exactly +-1.
inline float tanh_formula(float x) {
  const float a = __builtin_fabsf(x);
  const float z = x * x;
  const float near_zero =
      x * (1.0f + z * (-0.333333333f +
                       z * (0.133333333f +
                            z * (-0.053968254f + z * (0.0218694885f + z * (-0.00886323552f +
                                                                           z * 0.00359212803f))))));
  const float far = __builtin_copysignf(1.0f - 2.0f / (exp_formula(2.0f * a) + 1.0f), x);
  return select(a < 0.3f, near_zero, select(x != x, x, far));
}

// sigmoid(x) = 1 / (1 + exp(-x)).
inline float sigmoid_formula(float x) { return 1.0f / (1.0f + exp_formula(-x)); }

inline float gelu_formula(float x) {
  const float u = x * 0.707106781f;
  const float a = __builtin_fabsf(u);
  const float near_zero = 0.5f * x * (1.0f + erf_small(u));
  const float tail = erfc_scaled(__builtin_fabsf(x));
  const float far = 0.5f * x * select(x >= 0.0f, 2.0f - tail, tail);
  return select(a < 0.5f, near_zero, far);
}

// One row of layer norm for T = float or double: mean and 1/std of x[0..n) (sums in
// double, in 8 interleaved lanes so they vectorise without reordering), then
// y = (x - mean) / std * w + b.
template <typename T>
void layer_norm_row(const T* x, int64_t n, const T* w, const T* b, double eps, T* y, T* mean_out,
                    T* rstd_out) {
  constexpr int64_t kLanes = 8;
  const int64_t main = n / kLanes * kLanes;
  double lanes[kLanes] = {};
  for (int64_t i = 0; i < main; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(x[i + l]);
  }
  double sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += lanes[l];
  for (int64_t i = main; i < n; ++i) sum += static_cast<double>(x[i]);
  const double mean = sum / static_cast<double>(n);
  double squares[kLanes] = {};
  for (int64_t i = 0; i < main; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      const double d = static_cast<double>(x[i + l]) - mean;
      squares[l] += d * d;
    }
  }
  double sq = 0;
  for (int64_t l = 0; l < kLanes; ++l) sq += squares[l];
  for (int64_t i = main; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    sq += d * d;
  }
  const double rstd = 1.0 / __builtin_sqrt(sq / static_cast<double>(n) + eps);
  // The affine forms in loops of their own: a null w or b is never read.
  auto normalized = [&](int64_t i) {
    return static_cast<T>((static_cast<double>(x[i]) - mean) * rstd);
  };
  if (w != nullptr && b != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = normalized(i) * w[i] + b[i];
  } else if (w != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = normalized(i) * w[i];
  } else if (b != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = normalized(i) + b[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = normalized(i);
  }
  *mean_out = static_cast<T>(mean);
  *rstd_out = static_cast<T>(rstd);
}

}  // namespace
}  // namespace et::kernels::detail
