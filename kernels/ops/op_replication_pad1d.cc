// aten::replication_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out)
// Pads the last dim with copies of the edge element; see edge_pad.h.
#include "kernels/util/edge_pad.h"

namespace et::kernels {
namespace {

ET_REGISTER_KERNEL("aten::replication_pad1d.out", (edge_pad_out<EdgePadMode::kReplicate, 1>));

}  // namespace
}  // namespace et::kernels
