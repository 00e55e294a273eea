// Shared by sort and topk: order the values of each line along a dim.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/util/along_dim.h"

namespace et::kernels {

// Indices of `n` values (stride `is`) ordered descending or ascending; NaN sorts as
// the largest value, ties keep their original order (stable).
template <typename C>
std::vector<int64_t> ordered_indices(const C* in, int64_t is, int64_t n, bool descending) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  auto key_less = [&](int64_t a, int64_t b) {
    const C x = in[a * is], y = in[b * is];
    if constexpr (std::is_floating_point_v<C>) {
      if (x != x) return false;  // NaN is never less
      if (y != y) return true;   // anything is less than NaN
    }
    return x < y;
  };
  if (descending) {
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return key_less(b, a); });
  } else {
    std::stable_sort(order.begin(), order.end(), key_less);
  }
  return order;
}

}  // namespace et::kernels
