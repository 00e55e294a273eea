// quantized_decomposed::embedding_byte.out(Tensor weight, Tensor weight_scales,
//     Tensor? weight_zero_points, int weight_quant_min, int weight_quant_max,
//     Tensor indices, *, Tensor(a!) out) -> Tensor(a!)
// quantized_decomposed::embedding_byte.dtype_out(<the same>, *, ScalarType? dtype=None,
//     Tensor(a!) out) -> Tensor(a!)
// An embedding lookup in 8-bit weights: see kernels/util/quantized_embedding.h.
#include "kernels/util/quantized_embedding.h"

namespace et::kernels {
namespace {

Status embedding_byte_out(KernelContext& ctx) { return quantized_embedding(ctx, 8, false); }
Status embedding_byte_dtype_out(KernelContext& ctx) { return quantized_embedding(ctx, 8, true); }

ET_REGISTER_KERNEL("quantized_decomposed::embedding_byte.out", embedding_byte_out);
ET_REGISTER_KERNEL("quantized_decomposed::embedding_byte.dtype_out", embedding_byte_dtype_out);

}  // namespace
}  // namespace et::kernels
