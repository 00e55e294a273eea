// aten::zeros.out(SymInt[] size, *, Tensor(a!) out): see kernels/util/scalar_creation.h.
#include "kernels/util/scalar_creation.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::zeros.out", constant_factory_out<0>);

}  // namespace
}  // namespace et::kernels
