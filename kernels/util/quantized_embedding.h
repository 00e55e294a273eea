// The body of quantized_decomposed::embedding_byte, embedding_4bit and embedding_2bit
// (.out and .dtype_out): rows of a quantized [num_embeddings, packed dim] weight picked
// by `indices` and dequantized, group by group along the row:
//   out[..., j] = (q[j] - zero_points[row][g]) * scales[row][g],  g = j / group_size
// with scales [rows] or [rows, groups] (float32, float16 or bfloat16), zero points None
// or of the scales' shape and dtype, group_size = embedding dim / groups. Values are
// computed in the scales' dtype (as eager does) and stored as out's: `dtype` when the
// .dtype_out overload gives it, else the scales' dtype.
// Packing: 8 bits, one value a byte (int8 or uint8 as the weight's dtype says);
// 4 bits, two a byte, the HIGH nibble first, each stored plus 8 (weight_quant_min -8);
// 2 bits, four a byte, the LOW bits first, each stored plus 2 (weight_quant_min -2).
#pragma once

#include "kernels/util/index_util.h"
#include "kernels/util/quantize.h"

namespace et::kernels {

// The value of element j of a weight row of raw bytes.
inline int32_t unpack_quantized(const uint8_t* row, int64_t j, int bits, bool signed_bytes) {
  switch (bits) {
    case 4: {
      const uint8_t byte = row[j / 2];
      return (j % 2 == 0 ? byte >> 4 : byte & 0x0F) - 8;
    }
    case 2:
      return ((row[j / 4] >> (2 * (j % 4))) & 0x3) - 2;
    default:
      return signed_bytes ? static_cast<int8_t>(row[j]) : row[j];
  }
}

inline Status quantized_embedding(const KernelContext& ctx, int bits, bool dtype_overload) {
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* scales, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* zero_points, ctx.optional_input(2));
  ET_ASSIGN_OR_RETURN(int64_t qmin, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(int64_t qmax, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(const Tensor* indices, ctx.input(5));
  std::optional<int64_t> dtype;
  if (dtype_overload) {
    ET_ASSIGN_OR_RETURN(dtype, ctx.optional_int_arg(6));
  }
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(dtype_overload ? 7 : 6));
  if (weight->dim() != 2 ||
      (weight->dtype() != ScalarType::kByte && weight->dtype() != ScalarType::kChar)) {
    return ctx.fail(fmt::format("weight is a {} {}; it must be a 2-d uint8 or int8 tensor",
                                shape_string(weight->sizes()), scalar_type_name(weight->dtype())));
  }
  const ScalarType st = scales->dtype();
  if ((st != ScalarType::kFloat && st != ScalarType::kHalf && st != ScalarType::kBFloat16) ||
      (scales->dim() != 1 && scales->dim() != 2) || scales->size(0) != weight->size(0)) {
    return ctx.fail(
        fmt::format("weight_scales {} {} must be float32, float16 or bfloat16 with "
                    "one row (of one or more groups) per weight row ({})",
                    shape_string(scales->sizes()), scalar_type_name(st), weight->size(0)));
  }
  if (zero_points != nullptr &&
      (zero_points->dtype() != st || zero_points->numel() != scales->numel())) {
    return ctx.fail("weight_zero_points must match weight_scales in dtype and shape");
  }
  if (bits != 8 && (qmin != -(1 << (bits - 1)) || qmax != (1 << (bits - 1)) - 1)) {
    return ctx.fail(fmt::format("{}-bit weights have the range [{}, {}], not [{}, {}]", bits,
                                -(1 << (bits - 1)), (1 << (bits - 1)) - 1, qmin, qmax));
  }
  const int64_t dim = weight->size(1) * (8 / bits);
  const int64_t groups = scales->dim() == 2 ? scales->size(1) : 1;
  if (groups == 0 || dim % groups != 0) {
    return ctx.fail(fmt::format("{} groups do not divide the embedding dim {}", groups, dim));
  }
  const int64_t group_size = dim / groups;
  const ScalarType out_type = dtype ? static_cast<ScalarType>(*dtype) : st;
  if (out->dtype() != out_type || !is_quantizable(out_type)) {
    return ctx.fail(
        fmt::format("out is {}; the op gives {}", scalar_type_name(out->dtype()),
                    dtype ? std::to_string(*dtype) : std::string(scalar_type_name(st))));
  }
  if (indices->dim() + 1 > kMaxRank) return ctx.fail("indices have too many dims");
  ET_ASSIGN_OR_RETURN(const int64_t* idx, checked_indices(ctx, *indices, weight->size(0)));
  Shape shape = shape_of(*indices);
  shape.sizes[shape.rank++] = dim;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  // The packed bytes as they are (int8 weights reinterpreted, not converted): a
  // contiguous table is read in place, never copied whole.
  const uint8_t* w = static_cast<const uint8_t*>(weight->data());
  if (!weight->is_contiguous()) {
    ET_ASSIGN_OR_RETURN(w, dense_as<uint8_t>(ctx, *weight));
  }
  ET_ASSIGN_OR_RETURN(const float* s, dense_as<float>(ctx, *scales));
  ET_ASSIGN_OR_RETURN(const float* zp, optional_dense_as<float>(ctx, zero_points));
  ET_ASSIGN_OR_RETURN(float* y, dense_result<float>(ctx, *out));
  const bool signed_bytes = weight->dtype() == ScalarType::kChar;
  for (int64_t i = 0; i < indices->numel(); ++i) {
    const int64_t row = idx[i];
    const uint8_t* packed = w + row * weight->size(1);
    for (int64_t j = 0; j < dim; ++j) {
      const int64_t p = row * groups + j / group_size;
      const auto q = static_cast<float>(unpack_quantized(packed, j, bits, signed_bytes));
      const float shifted = round_to(st, zp != nullptr ? q - zp[p] : q);
      y[i * dim + j] = round_to(st, shifted * s[p]);
    }
  }
  return store_dense(ctx, y, *out);
}

}  // namespace et::kernels
