#include "kernels/vector_math.h"

#include "kernels/vector_math_impl.h"

namespace et::kernels {
namespace detail {

#if ET_CPU_X86
void exp_array_avx2(const float* x, float* y, int64_t n);
void gelu_array_avx2(const float* x, float* y, int64_t n);
void exp_array_avx512(const float* x, float* y, int64_t n);
void gelu_array_avx512(const float* x, float* y, int64_t n);
#endif

}  // namespace detail

void exp_array_on(CpuIsa isa, const float* x, float* y, int64_t n) {
  switch (isa) {
#if ET_CPU_X86
    case CpuIsa::kAvx512:
      return detail::exp_array_avx512(x, y, n);
    case CpuIsa::kAvx2:
      return detail::exp_array_avx2(x, y, n);
#endif
    default:
      for (int64_t i = 0; i < n; ++i) y[i] = detail::exp_formula(x[i]);
  }
}

void gelu_array_on(CpuIsa isa, const float* x, float* y, int64_t n) {
  switch (isa) {
#if ET_CPU_X86
    case CpuIsa::kAvx512:
      return detail::gelu_array_avx512(x, y, n);
    case CpuIsa::kAvx2:
      return detail::gelu_array_avx2(x, y, n);
#endif
    default:
      for (int64_t i = 0; i < n; ++i) y[i] = detail::gelu_formula(x[i]);
  }
}

void exp_array(const float* x, float* y, int64_t n) { exp_array_on(selected_isa(), x, y, n); }

void gelu_array(const float* x, float* y, int64_t n) { gelu_array_on(selected_isa(), x, y, n); }

}  // namespace et::kernels
