// aten::bitwise_left_shift.Tensor_out and .Tensor_Scalar_out: see kernels/util/scalar_bitwise.h.
#include "kernels/util/scalar_bitwise.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::bitwise_left_shift.Tensor_out", shift_tensor_out<ShiftLeft>);
ET_REGISTER_KERNEL("aten::bitwise_left_shift.Tensor_Scalar_out", shift_scalar_out<ShiftLeft>);

}  // namespace
}  // namespace et::kernels
