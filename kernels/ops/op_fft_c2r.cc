// aten::_fft_c2r.out(Tensor self, int[] dim, int normalization, SymInt last_dim_size, *,
//                    Tensor(a!) out)
// The inverse of _fft_r2c (what torch.fft.irfft and irfftn lower to): complex64 ->
// float32, complex128 -> float64. The last dim of `dim` holds the non-redundant half
// of a Hermitian spectrum whose full length is `last_dim_size`; the other dims are
// transformed as complex. Unnormalised unless `normalization` asks.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"
#include "kernels/util/fft.h"

namespace et::kernels {
namespace {

Status fft_c2r_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(int64_t normalization, ctx.int_arg(2));
  ET_ASSIGN_OR_RETURN(int64_t length, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  ET_ASSIGN_OR_RETURN(ScalarType real, real_of(ctx, self->dtype()));
  if (out->dtype() != real) {
    return ctx.fail(fmt::format("out is {}; the inverse real transform of {} is {}",
                                scalar_type_name(out->dtype()), scalar_type_name(self->dtype()),
                                scalar_type_name(real)));
  }
  if (length < 1) return ctx.fail(fmt::format("last_dim_size {} is not positive", length));
  ET_ASSIGN_OR_RETURN(std::vector<int> axes, fft_dims(ctx, dims, self->dim()));
  Signal half = read_signal(*self);
  for (size_t i = 0; i + 1 < axes.size(); ++i) transform(half, axes[i], /*inverse=*/true);
  // Rebuild the full Hermitian spectrum along the last dim: bin k <= L/2 is the input's
  // (0 beyond what it holds), bin k > L/2 the conjugate of bin L - k.
  const int last = axes.back();
  const int64_t m = half.shape.sizes[last];
  int64_t inner = 1;
  for (int d = last + 1; d < half.shape.rank; ++d) inner *= half.shape.sizes[d];
  Signal full;
  full.shape = half.shape;
  full.shape.sizes[last] = length;
  // Sized (and so bounded by the output's memory) before anything is allocated for it.
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, full.shape));
  const int64_t outer = m == 0 ? 0 : static_cast<int64_t>(half.values.size()) / (m * inner);
  full.values.assign(static_cast<size_t>(outer * length * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < length; ++k) {
      const bool lower = 2 * k <= length;
      const int64_t source = lower ? k : length - k;
      if (source >= m) continue;
      for (int64_t i = 0; i < inner; ++i) {
        const std::complex<double> v =
            half.values[static_cast<size_t>((o * m + source) * inner + i)];
        full.values[static_cast<size_t>((o * length + k) * inner + i)] = lower ? v : std::conj(v);
      }
    }
  }
  transform(full, last, /*inverse=*/true);
  int64_t n = 1;
  for (int axis : axes) n *= full.shape.sizes[axis];
  ET_ASSIGN_OR_RETURN(double scale, fft_scale(ctx, normalization, n));
  write_signal(full, scale, *out);
  return Status();
}

ET_REGISTER_KERNEL("aten::_fft_c2r.out", fft_c2r_out);

}  // namespace
}  // namespace et::kernels
