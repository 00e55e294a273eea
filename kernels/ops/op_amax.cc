// aten::amax.out: see kernels/util/extreme_ops.h.
#include "kernels/util/extreme_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::amax.out", amax_amin_out<true>);

}  // namespace
}  // namespace et::kernels
