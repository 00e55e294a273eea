// aten::bitwise_xor.Tensor_out: see kernels/util/bitwise_ops.h.
#include <functional>

#include "kernels/util/bitwise_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::bitwise_xor.Tensor_out", bitwise_out<std::bit_xor<>>);

}  // namespace
}  // namespace et::kernels
