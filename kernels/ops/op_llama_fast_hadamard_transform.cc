// llama::fast_hadamard_transform.out(Tensor mat, *, Tensor(a!) out) -> Tensor(a!)
// The orthonormal Walsh-Hadamard transform of every row of mat's last dim (SpinQuant's
// rotation in ExecuTorch's LLM flow), for rows of a power-of-two length N: butterfly
// stages of increasing stride (a + b, a - b), then a multiply by 1 / sqrt(N) computed as
// 1 / (2^(n/2) * sqrt(2) when n is odd), each step rounded to the dtype (float32 or
// float16), as ExecuTorch's kernel does. Rows of 28 * 2^n (its other form, built on a
// 28 x 28 Hadamard matrix) are refused as NotSupported.
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

// In float, each step rounded to `type`'s precision (float16 rounds every operation).
void transform_rows(float* v, int64_t rows, int64_t n, ScalarType type) {
  int log2n = 0;
  while ((int64_t{1} << log2n) < n) ++log2n;
  auto r = [type](float x) { return round_to(type, x); };
  const float root2 = r(static_cast<float>(std::sqrt(2.0)));
  const float inv = r(
      1.0f / r(r(static_cast<float>(int64_t{1} << (log2n / 2))) * (log2n % 2 == 1 ? root2 : 1.0f)));
  for (int64_t row = 0; row < rows; ++row) {
    float* x = v + row * n;
    for (int64_t step = 1; step < n; step *= 2) {
      for (int64_t i = 0; i < n; i += 2 * step) {
        for (int64_t j = i; j < i + step; ++j) {
          const float a = x[j], b = x[j + step];
          x[j] = r(a + b);
          x[j + step] = r(a - b);
        }
      }
    }
    for (int64_t i = 0; i < n; ++i) x[i] = r(x[i] * inv);
  }
}

Status fast_hadamard_transform_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* mat, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if ((mat->dtype() != ScalarType::kFloat && mat->dtype() != ScalarType::kHalf) ||
      out->dtype() != mat->dtype()) {
    return ctx.fail(fmt::format("mat is {} and out {}: both must be float32 or both float16",
                                scalar_type_name(mat->dtype()), scalar_type_name(out->dtype())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*mat)));
  if (out->numel() == 0) return Status();
  const int64_t n = mat->dim() == 0 ? 1 : mat->size(mat->dim() - 1);  // a scalar: itself
  if ((n & (n - 1)) != 0) {
    if (n % 28 == 0 && ((n / 28) & (n / 28 - 1)) == 0) {
      return ctx.unsupported(
          fmt::format("rows of {} = 28 x {} (only powers of two are taken)", n, n / 28));
    }
    return ctx.fail(fmt::format("rows of {}: the transform takes a power of two", n));
  }
  ET_ASSIGN_OR_RETURN(const float* x, dense_as<float>(ctx, *mat));
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({mat->numel()}, sizeof(float)));
  auto* v = static_cast<float*>(scratch);
  std::copy(x, x + mat->numel(), v);
  transform_rows(v, mat->numel() / n, n, mat->dtype());
  return store_dense(ctx, static_cast<const float*>(v), *out);
}

ET_REGISTER_KERNEL("llama::fast_hadamard_transform.out", fast_hadamard_transform_out);

}  // namespace
}  // namespace et::kernels
