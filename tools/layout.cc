#include "tools/layout.h"

#include <cstring>
#include <vector>

namespace et::tools {

void copy_strided(const void* src, std::span<const int64_t> src_strides, void* dst,
                  std::span<const int64_t> dst_strides, std::span<const int64_t> sizes,
                  size_t element_size) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0) return;
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  const size_t rank = sizes.size();
  std::vector<int64_t> index(rank, 0);
  int64_t si = 0, di = 0;
  for (int64_t n = 0; n < numel; ++n) {
    std::memcpy(out + di * static_cast<int64_t>(element_size),
                in + si * static_cast<int64_t>(element_size), element_size);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < sizes[d]) {
        si += src_strides[d];
        di += dst_strides[d];
        break;
      }
      si -= src_strides[d] * (sizes[d] - 1);
      di -= dst_strides[d] * (sizes[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace et::tools
