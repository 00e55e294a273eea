// vector_math's loops compiled for avx2 (only called when the CPU has it).
#include "kernels/vector_math_impl.h"

namespace et::kernels::detail {

#define ET_ARRAY_FUNCTION(name, formula)                        \
  void name##_array_avx2(const float* x, float* y, int64_t n) { \
    for (int64_t i = 0; i < n; ++i) y[i] = formula(x[i]);       \
  }

ET_ARRAY_FUNCTION(exp, exp_formula)
ET_ARRAY_FUNCTION(gelu, gelu_formula)
ET_ARRAY_FUNCTION(tanh, tanh_formula)
ET_ARRAY_FUNCTION(sigmoid, sigmoid_formula)

void layer_norm_rows_avx2(const float* x, int64_t rows, int64_t n, const float* w, const float* b,
                          double eps, float* y, float* means, float* rstds) {
  for (int64_t r = 0; r < rows; ++r) {
    layer_norm_row(x + r * n, n, w, b, eps, y + r * n, means + r, rstds + r);
  }
}

}  // namespace et::kernels::detail
