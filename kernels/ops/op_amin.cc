// aten::amin.out: see kernels/util/extreme_ops.h.
#include "kernels/util/extreme_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::amin.out", amax_amin_out<false>);

}  // namespace
}  // namespace et::kernels
