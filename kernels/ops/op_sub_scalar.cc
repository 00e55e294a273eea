// aten::sub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out):
// see kernels/util/scalar_arith.h.
#include "kernels/util/scalar_arith.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::sub.Scalar_out", scalar_arith_out<ScalarArith::kSub>);

}  // namespace
}  // namespace et::kernels
