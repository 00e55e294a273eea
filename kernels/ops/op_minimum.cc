// aten::minimum.out: see kernels/util/extreme_ops.h.
#include "kernels/util/extreme_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::minimum.out", maximum_minimum_out<false>);

}  // namespace
}  // namespace et::kernels
