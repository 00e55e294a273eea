#include "kernels/util/fft.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

using Complex = std::complex<double>;

// e^(sign 2 pi i k / n), exact at the quarter turns (so a real signal's Nyquist bin
// has an imaginary part of exactly 0).
Complex root(size_t k, size_t n, double sign) {
  k %= n;
  if (k == 0) return {1, 0};
  if (2 * k == n) return {-1, 0};
  if (4 * k == n) return {0, sign};
  if (4 * k == 3 * n) return {0, -sign};
  const double angle =
      sign * 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

// Radix-2 in place over n (a power of two) values, roots[k] = e^(+-2 pi i k / n):
// bit-reversal permutation, then log2(n) butterfly passes.
void radix2(Complex* line, size_t n, const std::vector<Complex>& roots) {
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(line[i], line[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const size_t step = n / len;
    for (size_t start = 0; start < n; start += len) {
      for (size_t k = 0; k < len / 2; ++k) {
        const Complex w = roots[k * step];
        const Complex a = line[start + k], b = line[start + k + len / 2] * w;
        line[start + k] = a + b;
        line[start + k + len / 2] = a - b;
      }
    }
  }
}

std::vector<Complex> roots_of(size_t n, double sign) {
  std::vector<Complex> roots(n);
  for (size_t k = 0; k < n; ++k) roots[k] = root(k, n, sign);
  return roots;
}

// The transform of one line of n values, planned once per dim: radix-2 when n is a
// power of two, else Bluestein's chirp: X_k = c_k sum_j (x_j c_j) conj(c_(k-j)) with
// c_k = e^(sign pi i k^2 / n), the convolution done by radix-2 transforms of length
// m >= 2n - 1. O(n log n) either way, so no length makes a call run for long.
class LineTransform {
 public:
  LineTransform(size_t n, double sign) : n_(n) {
    if ((n & (n - 1)) == 0) {
      roots_ = roots_of(n, sign);
      return;
    }
    m_ = 1;
    while (m_ < 2 * n - 1) m_ <<= 1;
    roots_ = roots_of(m_, -1.0);
    inverse_roots_ = roots_of(m_, 1.0);
    chirp_.resize(n);
    for (size_t k = 0; k < n; ++k) chirp_[k] = root((k * k) % (2 * n), 2 * n, sign);
    kernel_.assign(m_, 0.0);
    kernel_[0] = std::conj(chirp_[0]);
    for (size_t k = 1; k < n; ++k) kernel_[k] = kernel_[m_ - k] = std::conj(chirp_[k]);
    radix2(kernel_.data(), m_, roots_);
    work_.resize(m_);
  }

  void run(Complex* line) {
    if (n_ <= 1) return;
    if (m_ == 0) {
      radix2(line, n_, roots_);
      return;
    }
    std::fill(work_.begin(), work_.end(), 0.0);
    for (size_t j = 0; j < n_; ++j) work_[j] = line[j] * chirp_[j];
    radix2(work_.data(), m_, roots_);
    for (size_t k = 0; k < m_; ++k) work_[k] *= kernel_[k];
    radix2(work_.data(), m_, inverse_roots_);
    const double scale = 1.0 / static_cast<double>(m_);
    for (size_t k = 0; k < n_; ++k) line[k] = work_[k] * chirp_[k] * scale;
  }

 private:
  size_t n_, m_ = 0;  // m_ > 0: Bluestein over m_ points
  std::vector<Complex> roots_, inverse_roots_, chirp_, kernel_, work_;
};

}  // namespace

Signal read_signal(const Tensor& t) {
  Signal s;
  s.shape = shape_of(t);
  s.values.resize(static_cast<size_t>(t.numel()));
  std::array<int64_t, kMaxRank> strides{};
  for (int d = 0; d < t.dim(); ++d) strides[d] = t.stride(d);
  size_t i = 0;
  const void* data = t.data();
  for_each_index<1>(s.shape, {strides.data()}, [&](const std::array<int64_t, 1>& at) {
    switch (t.dtype()) {
      case ScalarType::kFloat:
        s.values[i++] = static_cast<const float*>(data)[at[0]];
        break;
      case ScalarType::kDouble:
        s.values[i++] = static_cast<const double*>(data)[at[0]];
        break;
      case ScalarType::kComplexFloat: {
        const auto v = static_cast<const std::complex<float>*>(data)[at[0]];
        s.values[i++] = {v.real(), v.imag()};
        break;
      }
      default:  // complex128
        s.values[i++] = static_cast<const Complex*>(data)[at[0]];
        break;
    }
  });
  return s;
}

void transform(Signal& s, int dim, bool inverse) {
  const auto n = static_cast<size_t>(s.shape.sizes[dim]);
  if (n <= 1 || s.values.empty()) return;
  LineTransform plan(n, inverse ? 1.0 : -1.0);
  std::vector<Complex> line(n);
  size_t inner = 1;
  for (int d = dim + 1; d < s.shape.rank; ++d) inner *= static_cast<size_t>(s.shape.sizes[d]);
  const size_t outer = s.values.size() / (n * inner);
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inner; ++i) {
      Complex* base = s.values.data() + o * n * inner + i;
      for (size_t j = 0; j < n; ++j) line[j] = base[j * inner];
      plan.run(line.data());
      for (size_t j = 0; j < n; ++j) base[j * inner] = line[j];
    }
  }
}

void write_signal(const Signal& s, double scale, Tensor& out) {
  std::array<int64_t, kMaxRank> strides{};
  for (int d = 0; d < out.dim(); ++d) strides[d] = out.stride(d);
  size_t i = 0;
  void* data = out.mutable_data();
  for_each_index<1>(s.shape, {strides.data()}, [&](const std::array<int64_t, 1>& at) {
    const Complex v = s.values[i++] * scale;
    switch (out.dtype()) {
      case ScalarType::kFloat:
        static_cast<float*>(data)[at[0]] = static_cast<float>(v.real());
        break;
      case ScalarType::kDouble:
        static_cast<double*>(data)[at[0]] = v.real();
        break;
      case ScalarType::kComplexFloat:
        static_cast<std::complex<float>*>(data)[at[0]] = {static_cast<float>(v.real()),
                                                          static_cast<float>(v.imag())};
        break;
      default:  // complex128
        static_cast<Complex*>(data)[at[0]] = v;
        break;
    }
  });
}

Result<double> fft_scale(const KernelContext& ctx, int64_t normalization, int64_t n) {
  switch (normalization) {
    case 0:
      return 1.0;
    case 1:
      return n == 0 ? 1.0 : 1.0 / std::sqrt(static_cast<double>(n));
    case 2:
      return n == 0 ? 1.0 : 1.0 / static_cast<double>(n);
    default:
      return ctx.fail(fmt::format("normalization {} is not 0 (none), 1 (by sqrt(n)) or 2 (by n)",
                                  normalization));
  }
}

Result<std::vector<int>> fft_dims(const KernelContext& ctx, std::span<const int64_t> dims,
                                  int rank) {
  if (dims.empty()) return ctx.fail("no dim to transform over");
  std::vector<int> axes;
  for (int64_t d : dims) {
    ET_ASSIGN_OR_RETURN(int w, wrap_dim(ctx, d, rank));
    if (std::find(axes.begin(), axes.end(), w) != axes.end()) {
      return ctx.fail(fmt::format("dim {} is given twice", d));
    }
    axes.push_back(w);
  }
  return axes;
}

Result<ScalarType> complex_of(const KernelContext& ctx, ScalarType real) {
  if (real == ScalarType::kFloat) return ScalarType::kComplexFloat;
  if (real == ScalarType::kDouble) return ScalarType::kComplexDouble;
  return ctx.unsupported(
      fmt::format("Fourier transforms of {} (float32 and float64 are supported, as in PyTorch)",
                  scalar_type_name(real)));
}

Result<ScalarType> real_of(const KernelContext& ctx, ScalarType complex) {
  if (complex == ScalarType::kComplexFloat) return ScalarType::kFloat;
  if (complex == ScalarType::kComplexDouble) return ScalarType::kDouble;
  return ctx.unsupported(fmt::format("{} where a complex64 or complex128 tensor is needed",
                                     scalar_type_name(complex)));
}

}  // namespace et::kernels
