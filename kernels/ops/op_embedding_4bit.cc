// quantized_decomposed::embedding_4bit.out(Tensor weight, Tensor weight_scales,
//     Tensor? weight_zero_points, int weight_quant_min, int weight_quant_max,
//     Tensor indices, *, Tensor(a!) out) -> Tensor(a!)
// quantized_decomposed::embedding_4bit.dtype_out(<the same>, *, ScalarType? dtype=None,
//     Tensor(a!) out) -> Tensor(a!)
// An embedding lookup in 4-bit weights: see kernels/util/quantized_embedding.h.
#include "kernels/util/quantized_embedding.h"

namespace et::kernels {
namespace {

Status embedding_4bit_out(KernelContext& ctx) { return quantized_embedding(ctx, 4, false); }
Status embedding_4bit_dtype_out(KernelContext& ctx) { return quantized_embedding(ctx, 4, true); }

ET_REGISTER_KERNEL("quantized_decomposed::embedding_4bit.out", embedding_4bit_out);
ET_REGISTER_KERNEL("quantized_decomposed::embedding_4bit.dtype_out", embedding_4bit_dtype_out);

}  // namespace
}  // namespace et::kernels
