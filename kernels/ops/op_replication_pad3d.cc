// aten::replication_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out)
// Pads the last 3 dims with copies of the edge element; see edge_pad.h.
#include "kernels/util/edge_pad.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::replication_pad3d.out", (edge_pad_out<EdgePadMode::kReplicate, 3>));

}  // namespace
}  // namespace et::kernels
