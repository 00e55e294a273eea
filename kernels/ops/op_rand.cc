// aten::rand.out(SymInt[] size, *, Tensor(a!) out): see kernels/util/scalar_random.h.
#include "kernels/util/scalar_random.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::rand.out", random_out<false>);

}  // namespace
}  // namespace et::kernels
