// aten::maximum.out: see kernels/util/extreme_ops.h.
#include "kernels/util/extreme_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::maximum.out", maximum_minimum_out<true>);

}  // namespace
}  // namespace et::kernels
