// aten::bitwise_or.Tensor_out: see kernels/util/bitwise_ops.h.
#include <functional>

#include "kernels/util/bitwise_ops.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::bitwise_or.Tensor_out", bitwise_out<std::bit_or<>>);

}  // namespace
}  // namespace et::kernels
