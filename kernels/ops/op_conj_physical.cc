// aten::_conj_physical.out(Tensor self, *, Tensor(a!) out)
// The complex conjugate, materialised: complex64/complex128 negate their imaginary
// parts; any other dtype is copied as it is (real values are their own conjugate).
#include <complex>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

template <typename T>
void conjugate(std::complex<T>* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = std::conj(data[i]);
}

Status conj_physical_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dtype() == ScalarType::kComplexHalf) {
    return ctx.unsupported("complex32 (complex64 and complex128 are supported)");
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*self)));
  ET_RETURN_IF_ERROR(copy_logical(ctx, *self, *out));
  if (self->dtype() == ScalarType::kComplexFloat) {
    conjugate(static_cast<std::complex<float>*>(out->mutable_data()), out->numel());
  } else if (self->dtype() == ScalarType::kComplexDouble) {
    conjugate(static_cast<std::complex<double>*>(out->mutable_data()), out->numel());
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::_conj_physical.out", conj_physical_out);

}  // namespace
}  // namespace et::kernels
