// aten::min.dim_min: see kernels/util/extreme_ops.h.
#include "kernels/util/extreme_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::min.dim_min", max_min_dim_out<false>);

}  // namespace
}  // namespace et::kernels
