// Helpers for libetclient's end-to-end tests: fixture .npy files as float vectors, and
// how far a SharedTensor's floats are from a reference.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "etclient/client.h"
#include "tests/support/daemon.h"

namespace et::testing {

inline const std::string kFixtures = ET_FIXTURES_DIR;

// The float32 elements of tests/models/`rel`; its sizes into `sizes` when given.
inline std::vector<float> npy_floats(const std::string& rel,
                                     std::vector<int64_t>* sizes = nullptr) {
  pb::Tensor t = npy_tensor(kFixtures + "/" + rel);
  if (sizes) sizes->assign(t.sizes().begin(), t.sizes().end());
  std::vector<float> v(t.inline_data().size() / 4);
  std::memcpy(v.data(), t.inline_data().data(), v.size() * 4);
  return v;
}

// The largest |t[i] - want[i]|, or infinity when the element counts differ.
inline float max_diff(const etclient::SharedTensor& t, const std::vector<float>& want) {
  if (t.numel() != want.size()) return INFINITY;
  float worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::fabs(t.data_as<float>()[i] - want[i]));
  return worst;
}

}  // namespace et::testing
