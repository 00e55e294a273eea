// The p-norm distance of two rows, shared by aten::_cdist_forward and
// aten::_pdist_forward: p = 0 counts differing coordinates, p = inf takes the largest
// difference (NaN wins, as PyTorch's maximum).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/util/convert.h"

namespace et::kernels {

// The p-norm of the difference of two rows of length m.
template <typename T>
T p_distance(const T* a, const T* b, int64_t m, double p) {
  T agg(0);
  if (p == 0) {
    for (int64_t k = 0; k < m; ++k) agg += (a[k] - b[k]) != T(0) ? T(1) : T(0);
    return agg;
  }
  if (std::isinf(p)) {
    for (int64_t k = 0; k < m; ++k) {
      const T d = std::abs(a[k] - b[k]);
      agg = (std::isnan(d) || d > agg) ? d : agg;  // NaN wins, as PyTorch's maximum
      if (std::isnan(agg)) return agg;
    }
    return agg;
  }
  if (p == 1) {
    for (int64_t k = 0; k < m; ++k) agg += std::abs(a[k] - b[k]);
    return agg;
  }
  if (p == 2) {
    for (int64_t k = 0; k < m; ++k) agg += (a[k] - b[k]) * (a[k] - b[k]);
    return std::sqrt(agg);
  }
  const T tp = convert_value<T>(p);
  for (int64_t k = 0; k < m; ++k) agg += std::pow(std::abs(a[k] - b[k]), tp);
  return std::pow(agg, convert_value<T>(1.0 / p));
}

}  // namespace et::kernels
