// aten::reflection_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out)
// Pads the last 2 dims with a mirror image about the edge element; see edge_pad.h.
#include "kernels/util/edge_pad.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::reflection_pad2d.out", (edge_pad_out<EdgePadMode::kReflect, 2>));

}  // namespace
}  // namespace et::kernels
