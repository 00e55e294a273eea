// aten::max.unary_out: see kernels/util/scalar_extreme.h.
#include "kernels/util/scalar_extreme.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::max.unary_out", max_min_unary_out<true>);

}  // namespace
}  // namespace et::kernels
