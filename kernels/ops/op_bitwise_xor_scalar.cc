// aten::bitwise_xor.Scalar_out: see kernels/util/scalar_bitwise.h.
#include <functional>

#include "kernels/util/scalar_bitwise.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::bitwise_xor.Scalar_out", bitwise_scalar_out<std::bit_xor<>>);

}  // namespace
}  // namespace et::kernels
