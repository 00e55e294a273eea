// aten::argmin.out: see kernels/util/extreme_ops.h.
#include "kernels/util/extreme_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::argmin.out", argmax_argmin_out<false>);

}  // namespace
}  // namespace et::kernels
