// aten::bitwise_or.Scalar_out: see kernels/util/scalar_bitwise.h.
#include <functional>

#include "kernels/util/scalar_bitwise.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::bitwise_or.Scalar_out", bitwise_scalar_out<std::bit_or<>>);

}  // namespace
}  // namespace et::kernels
