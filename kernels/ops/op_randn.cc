// aten::randn.out(SymInt[] size, *, Tensor(a!) out): see kernels/util/scalar_random.h.
#include "kernels/util/scalar_random.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::randn.out", random_out<true>);

}  // namespace
}  // namespace et::kernels
