#include "server/core/decoded_input.h"

#include <cstdint>

namespace et::server {

ElementCount count_elements(std::span<const int64_t> sizes) {
  ElementCount count;
  uint64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0 || s > INT32_MAX) {
      count.bad_size = s;
      return count;
    }
    if (s != 0 && n > kMostInputElements / static_cast<uint64_t>(s)) {
      count.too_many = true;
    } else {
      n *= static_cast<uint64_t>(s);
    }
  }
  count.elements = count.too_many ? 0 : n;
  return count;
}

}  // namespace et::server
