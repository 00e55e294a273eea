// vector_math's loops compiled for avx2 (only called when the CPU has it).
#include "kernels/vector_math_impl.h"

namespace et::kernels::detail {

void exp_array_avx2(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = exp_formula(x[i]);
}

void gelu_array_avx2(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = gelu_formula(x[i]);
}

}  // namespace et::kernels::detail
