// aten::_fft_r2c.out(Tensor self, int[] dim, int normalization, bool onesided, *,
//                    Tensor(a!) out)
// The Fourier transform of a real signal over `dim` (what torch.fft.rfft, rfftn and
// torch.stft lower to): float32 -> complex64, float64 -> complex128. With `onesided`
// the last transformed dim keeps its n / 2 + 1 non-redundant bins.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"
#include "kernels/util/fft.h"

namespace et::kernels {
namespace {

Status fft_r2c_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t normalization, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(bool onesided, ctx.bool_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  ET_ASSIGN_OR_RETURN(ScalarType want, complex_of(ctx, self->dtype()));
  if (out->dtype() != want) {
    return ctx.fail(fmt::format("out is {}; the transform of {} is {}",
                                scalar_type_name(out->dtype()), scalar_type_name(self->dtype()),
                                scalar_type_name(want)));
  }
  ET_ASSIGN_OR_RETURN(std::vector<int> axes, fft_dims(ctx, dims, self->dim()));
  int64_t n = 1;
  for (int axis : axes) n *= self->size(axis);
  ET_ASSIGN_OR_RETURN(double scale, fft_scale(ctx, normalization, n));
  Signal signal = read_signal(*self);
  for (int axis : axes) transform(signal, axis, /*inverse=*/false);
  Shape shape = signal.shape;
  if (onesided) {
    // Keep bins 0..n/2 of the last transformed dim (the rest mirror them).
    const int last = axes.back();
    const int64_t full = shape.sizes[last];
    const int64_t kept = full / 2 + 1;
    if (full > 0 && kept < full) {
      int64_t inner = 1;
      for (int d = last + 1; d < shape.rank; ++d) inner *= shape.sizes[d];
      std::vector<std::complex<double>> cropped;
      cropped.reserve(signal.values.size() / static_cast<size_t>(full) * static_cast<size_t>(kept));
      for (size_t start = 0; start < signal.values.size();
           start += static_cast<size_t>(full * inner)) {
        cropped.insert(cropped.end(), signal.values.begin() + static_cast<std::ptrdiff_t>(start),
                       signal.values.begin() + static_cast<std::ptrdiff_t>(start + kept * inner));
      }
      signal.values = std::move(cropped);
      shape.sizes[last] = kept;
      signal.shape = shape;
    }
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  write_signal(signal, scale, *out);
  return Status();
}

ET_REGISTER_KERNEL("aten::_fft_r2c.out", fft_r2c_out);

}  // namespace
}  // namespace et::kernels
