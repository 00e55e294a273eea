// aten::max.dim_max: see kernels/util/extreme_ops.h.
#include "kernels/util/extreme_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::max.dim_max", max_min_dim_out<true>);

}  // namespace
}  // namespace et::kernels
