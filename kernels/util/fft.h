// Discrete Fourier transforms for the aten::_fft_* kernels: a signal held as complex
// doubles in C order, transformed line by line along chosen dims (radix-2 when a
// line's length is a power of two, Bluestein's chirp otherwise), read from and written to
// real or complex tensors of any layout.
#pragma once

#include <complex>
#include <span>
#include <vector>

#include "kernels/util/shape_util.h"
#include "runtime/core/kernel.h"

namespace et::kernels {

struct Signal {
  Shape shape;
  std::vector<std::complex<double>> values;  // C order of `shape`
};

// `t` (float32/float64, or complex64/complex128) as complex values.
// REQUIRES: t's dtype is one of those.
Signal read_signal(const Tensor& t);

// Transforms every line of `s` along `dim` in place: forward with exp(-2 pi i jk / n),
// inverse with exp(+2 pi i jk / n); neither is normalised.
void transform(Signal& s, int dim, bool inverse);

// Writes s * scale into `out` (same shape): the complex values into a complex64/128
// tensor, or their real parts into a float32/float64 one.
void write_signal(const Signal& s, double scale, Tensor& out);

// The factor ATen's `normalization` argument asks for over a signal of n elements:
// 0 none, 1 1/sqrt(n), 2 1/n. InvalidArgument for another value.
Result<double> fft_scale(const KernelContext& ctx, int64_t normalization, int64_t n);

// `dims` wrapped into [0, rank), in order; InvalidArgument for none or a repeat.
Result<std::vector<int>> fft_dims(const KernelContext& ctx, std::span<const int64_t> dims,
                                  int rank);

// The complex dtype of a real one's transform (float32 -> complex64, float64 ->
// complex128), or NotSupported naming the dtype.
Result<ScalarType> complex_of(const KernelContext& ctx, ScalarType real);
// The real dtype of a complex one's parts (complex64 -> float32, complex128 ->
// float64), or NotSupported naming the dtype.
Result<ScalarType> real_of(const KernelContext& ctx, ScalarType complex);

}  // namespace et::kernels
