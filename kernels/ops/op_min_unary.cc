// aten::min.unary_out: see kernels/util/scalar_extreme.h.
#include "kernels/util/scalar_extreme.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::min.unary_out", max_min_unary_out<false>);

}  // namespace
}  // namespace et::kernels
