// aten::reflection_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out)
// Pads the last 3 dims with a mirror image about the edge element; see edge_pad.h.
#include "kernels/util/edge_pad.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::reflection_pad3d.out", (edge_pad_out<EdgePadMode::kReflect, 3>));

}  // namespace
}  // namespace et::kernels
