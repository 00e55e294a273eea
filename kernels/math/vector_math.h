// Elementwise float functions over arrays, vectorised for the CPU (cpu_isa.h): the
// transcendental nodes and ops that dominate transformers and recurrent nets (GELU,
// exp, tanh, sigmoid), where a libm call per element costs more than the matrix products around
// them.
//
// Accuracy (measured by vector_math_test.cc over a dense sweep against double-precision
// libm): exp within 2 ulp on [-87, 88] (0 below -87.3, +inf above 88.7); GELU (erf form)
// within 5e-7 relative (4.3e-7 measured) where |gelu(x)| > 1e-30, computed as
// 0.5 x erfc(|x|/sqrt2) for negative x so the tail does not cancel; tanh and sigmoid
// within 4 ulp. NaN in gives NaN out.
#pragma once

#include <cstdint>

#include "kernels/math/cpu_isa.h"

namespace et::kernels {

// y[i] = exp(x[i]) for i < n. x and y may be the same array.
void exp_array(const float* x, float* y, int64_t n);

// y[i] = x[i] * Phi(x[i]) = 0.5 x (1 + erf(x / sqrt2)), GELU without approximation.
void gelu_array(const float* x, float* y, int64_t n);

// y[i] = tanh(x[i]); y[i] = 1 / (1 + exp(-x[i])).
void tanh_array(const float* x, float* y, int64_t n);
void sigmoid_array(const float* x, float* y, int64_t n);

// Layer norm of `rows` rows of n values each: y = (x - mean) / sqrt(var + eps) * w + b
// per row (w, b: n values each, or null for 1 and 0), means[r] and rstds[r] = 1/std.
// Sums in double. float is vectorised for the CPU; double runs the same formula as it
// is. REQUIRES: n > 0.
void layer_norm_rows(const float* x, int64_t rows, int64_t n, const float* w, const float* b,
                     double eps, float* y, float* means, float* rstds);
void layer_norm_rows(const double* x, int64_t rows, int64_t n, const double* w, const double* b,
                     double eps, double* y, double* means, double* rstds);

// The same with one particular ISA. REQUIRES: `isa` is in available_isas().
void exp_array_on(CpuIsa isa, const float* x, float* y, int64_t n);
void gelu_array_on(CpuIsa isa, const float* x, float* y, int64_t n);
void tanh_array_on(CpuIsa isa, const float* x, float* y, int64_t n);
void sigmoid_array_on(CpuIsa isa, const float* x, float* y, int64_t n);
void layer_norm_rows_on(CpuIsa isa, const float* x, int64_t rows, int64_t n, const float* w,
                        const float* b, double eps, float* y, float* means, float* rstds);

}  // namespace et::kernels
