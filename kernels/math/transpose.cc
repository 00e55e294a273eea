#include "kernels/math/transpose.h"

#include "kernels/math/cpu_isa.h"
#include "kernels/math/transpose_impl.h"

namespace et::kernels {

bool transpose_plane(const void* in, int64_t in_stride, void* out, int64_t out_stride, int64_t rows,
                     int64_t cols, size_t elsize) {
  switch (elsize) {
    case 1:
      detail::transpose_tiles(static_cast<const uint8_t*>(in), in_stride,
                              static_cast<uint8_t*>(out), out_stride, 0, rows, 0, cols);
      return true;
    case 2:
      detail::transpose_tiles(static_cast<const uint16_t*>(in), in_stride,
                              static_cast<uint16_t*>(out), out_stride, 0, rows, 0, cols);
      return true;
    case 4:
#if ET_CPU_X86
      if (selected_isa() != CpuIsa::kPortable) {
        detail::transpose_plane32_avx2(static_cast<const uint32_t*>(in), in_stride,
                                       static_cast<uint32_t*>(out), out_stride, rows, cols);
        return true;
      }
#endif
      detail::transpose_tiles(static_cast<const uint32_t*>(in), in_stride,
                              static_cast<uint32_t*>(out), out_stride, 0, rows, 0, cols);
      return true;
    case 8:
      detail::transpose_tiles(static_cast<const uint64_t*>(in), in_stride,
                              static_cast<uint64_t*>(out), out_stride, 0, rows, 0, cols);
      return true;
    default:
      return false;
  }
}

}  // namespace et::kernels
