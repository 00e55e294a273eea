// quantized_decomposed::embedding_2bit.out(Tensor weight, Tensor weight_scales,
//     Tensor? weight_zero_points, int weight_quant_min, int weight_quant_max,
//     Tensor indices, *, Tensor(a!) out) -> Tensor(a!)
// quantized_decomposed::embedding_2bit.dtype_out(<the same>, *, ScalarType? dtype=None,
//     Tensor(a!) out) -> Tensor(a!)
// An embedding lookup in 2-bit weights: see kernels/util/quantized_embedding.h.
#include "kernels/util/quantized_embedding.h"

namespace et::kernels {
namespace {

Status embedding_2bit_out(KernelContext& ctx) { return quantized_embedding(ctx, 2, false); }
Status embedding_2bit_dtype_out(KernelContext& ctx) { return quantized_embedding(ctx, 2, true); }

ET_REGISTER_KERNEL("quantized_decomposed::embedding_2bit.out", embedding_2bit_out);
ET_REGISTER_KERNEL("quantized_decomposed::embedding_2bit.dtype_out", embedding_2bit_dtype_out);

}  // namespace
}  // namespace et::kernels
