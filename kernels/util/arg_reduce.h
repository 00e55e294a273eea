// argmax/argmin and max/min over a dim: the first index of the extreme value, NaN
// counting as the extreme (PyTorch's rule).
#pragma once

#include "kernels/util/reduce.h"

namespace et::kernels {

template <bool kMax, typename C>
std::pair<C, int64_t> extreme(const C* base, const ReducePlan& p) {
  C best = base[0];
  int64_t best_index = 0, index = 0;
  for_each_reduced(p, base, [&](C v) {
    bool better;
    if constexpr (std::is_floating_point_v<C>) {
      better = best == best && (v != v || (kMax ? v > best : v < best));
    } else {
      better = kMax ? v > best : v < best;
    }
    if (better) {
      best = v;
      best_index = index;
    }
    ++index;
  });
  return {best, best_index};
}

}  // namespace et::kernels
