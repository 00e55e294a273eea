// aten::bitwise_right_shift.Tensor_out and .Tensor_Scalar_out: see kernels/util/scalar_bitwise.h.
#include "kernels/util/scalar_bitwise.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::bitwise_right_shift.Tensor_out", shift_tensor_out<ShiftRight>);
ET_REGISTER_KERNEL("aten::bitwise_right_shift.Tensor_Scalar_out", shift_scalar_out<ShiftRight>);

}  // namespace
}  // namespace et::kernels
