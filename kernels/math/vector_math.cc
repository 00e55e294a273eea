#include "kernels/math/vector_math.h"

#include "kernels/math/vector_math_impl.h"

namespace et::kernels {
namespace detail {

#if ET_CPU_X86
#define ET_DECLARE_ISA_ARRAYS(name)                            \
  void name##_array_avx2(const float* x, float* y, int64_t n); \
  void name##_array_avx512(const float* x, float* y, int64_t n);
ET_DECLARE_ISA_ARRAYS(exp)
ET_DECLARE_ISA_ARRAYS(gelu)
ET_DECLARE_ISA_ARRAYS(tanh)
ET_DECLARE_ISA_ARRAYS(sigmoid)
void layer_norm_rows_avx2(const float* x, int64_t rows, int64_t n, const float* w, const float* b,
                          double eps, float* y, float* means, float* rstds);
void layer_norm_rows_avx512(const float* x, int64_t rows, int64_t n, const float* w, const float* b,
                            double eps, float* y, float* means, float* rstds);
#endif

}  // namespace detail

// name_array_on(isa, ...) and name_array(...) for one function of vector_math.h.
#if ET_CPU_X86
#define ET_ISA_CASES(name)                       \
  case CpuIsa::kAvx512:                          \
    return detail::name##_array_avx512(x, y, n); \
  case CpuIsa::kAvx2:                            \
    return detail::name##_array_avx2(x, y, n);
#else
#define ET_ISA_CASES(name)
#endif
#define ET_DEFINE_ARRAY_FUNCTION(name)                                       \
  void name##_array_on(CpuIsa isa, const float* x, float* y, int64_t n) {    \
    switch (isa) {                                                           \
      ET_ISA_CASES(name)                                                     \
      default:                                                               \
        for (int64_t i = 0; i < n; ++i) y[i] = detail::name##_formula(x[i]); \
    }                                                                        \
  }                                                                          \
  void name##_array(const float* x, float* y, int64_t n) {                   \
    name##_array_on(selected_isa(), x, y, n);                                \
  }

ET_DEFINE_ARRAY_FUNCTION(exp)
ET_DEFINE_ARRAY_FUNCTION(gelu)
ET_DEFINE_ARRAY_FUNCTION(tanh)
ET_DEFINE_ARRAY_FUNCTION(sigmoid)

void layer_norm_rows_on(CpuIsa isa, const float* x, int64_t rows, int64_t n, const float* w,
                        const float* b, double eps, float* y, float* means, float* rstds) {
  switch (isa) {
#if ET_CPU_X86
    case CpuIsa::kAvx512:
      return detail::layer_norm_rows_avx512(x, rows, n, w, b, eps, y, means, rstds);
    case CpuIsa::kAvx2:
      return detail::layer_norm_rows_avx2(x, rows, n, w, b, eps, y, means, rstds);
#endif
    default:
      for (int64_t r = 0; r < rows; ++r) {
        detail::layer_norm_row(x + r * n, n, w, b, eps, y + r * n, means + r, rstds + r);
      }
  }
}

void layer_norm_rows(const float* x, int64_t rows, int64_t n, const float* w, const float* b,
                     double eps, float* y, float* means, float* rstds) {
  layer_norm_rows_on(selected_isa(), x, rows, n, w, b, eps, y, means, rstds);
}

void layer_norm_rows(const double* x, int64_t rows, int64_t n, const double* w, const double* b,
                     double eps, double* y, double* means, double* rstds) {
  for (int64_t r = 0; r < rows; ++r) {
    detail::layer_norm_row(x + r * n, n, w, b, eps, y + r * n, means + r, rstds + r);
  }
}

}  // namespace et::kernels
