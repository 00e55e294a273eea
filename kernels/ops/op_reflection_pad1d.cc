// aten::reflection_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out)
// Pads the last dim with a mirror image about the edge element; see edge_pad.h.
#include "kernels/util/edge_pad.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::reflection_pad1d.out", (edge_pad_out<EdgePadMode::kReflect, 1>));

}  // namespace
}  // namespace et::kernels
