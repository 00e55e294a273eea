// aten::relu.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

namespace et::kernels {
namespace {

Status relu_out(KernelContext& ctx) {
  // NaN stays NaN, as in PyTorch.
  return unary_same_out(ctx,
                        [](auto x) { return x > decltype(x)(0) || x != x ? x : decltype(x)(0); });
}

ET_REGISTER_KERNEL("aten::relu.out", relu_out);

}  // namespace
}  // namespace et::kernels
