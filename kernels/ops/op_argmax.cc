// aten::argmax.out: see kernels/util/extreme_ops.h.
#include "kernels/util/extreme_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::argmax.out", argmax_argmin_out<true>);

}  // namespace
}  // namespace et::kernels
