// quantized_decomposed::choose_qparams_per_token_asymmetric.out(Tensor input,
//     ScalarType dtype, *, Tensor(a!) scale_out, Tensor(b!) zero_point_out)
//     -> (Tensor(a!), Tensor(b!))
// For each row (the last dim): the int8 quantization of XNNPACK's dynamic linear
// layers, as eager computes it in float32. With lo = min(row min, 0) and hi = max(row
// max, 0): scale = max((hi - lo) / 255, FLT_EPSILON); the zero point is -128 - lo/scale
// or 127 - hi/scale, whichever end has the smaller error, clamped to [-128, 127] and
// rounded (ties to even). scale_out (float64) and zero_point_out (int64) take the
// input's shape with a last dim of 1. `dtype` is not read: the range is always int8's.
#include <cfloat>

#include "kernels/util/min_max.h"
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

Status choose_qparams_per_token_asymmetric_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * scale_out, ctx.output(2));
  ET_ASSIGN_OR_RETURN(Tensor * zero_point_out, ctx.output(3));
  if (!is_quantizable(input->dtype()) || input->dim() == 0) {
    return ctx.fail(fmt::format("input is a {} {}; it must be a float tensor of 1 or more dims",
                                shape_string(input->sizes()), scalar_type_name(input->dtype())));
  }
  if (!is_quantizable(scale_out->dtype()) || zero_point_out->dtype() == ScalarType::kBool ||
      is_quantizable(zero_point_out->dtype())) {
    return ctx.fail("scale_out must be a float tensor and zero_point_out an integer one");
  }
  Shape shape = shape_of(*input);
  const int64_t row = shape.sizes[shape.rank - 1];
  shape.sizes[shape.rank - 1] = 1;
  ET_RETURN_IF_ERROR(resize_output(ctx, *scale_out, shape));
  ET_RETURN_IF_ERROR(resize_output(ctx, *zero_point_out, shape));
  const int64_t rows = scale_out->numel();
  if (rows == 0) return Status();
  if (row == 0) return ctx.fail("rows of no values have no range to quantize");
  ET_ASSIGN_OR_RETURN(const float* x, dense_as<float>(ctx, *input));
  ET_ASSIGN_OR_RETURN(double* scales, dense_result<double>(ctx, *scale_out));
  ET_ASSIGN_OR_RETURN(int64_t * zps, dense_result<int64_t>(ctx, *zero_point_out));
  constexpr float qmin = -128.0f, qmax = 127.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* v = x + r * row;
    // std::min / std::max over the row, NaNs after v[0] skipped (a zero's sign, which
    // min_max may take from another lane, changes neither scale nor zero point).
    float lo = v[0], hi = v[0];
    min_max(v + 1, static_cast<size_t>(row - 1), lo, hi);
    lo = std::min(lo, 0.0f);
    hi = std::max(hi, 0.0f);
    const float scale = std::max((hi - lo) / (qmax - qmin), FLT_EPSILON);
    const float descaled_min = lo / scale, descaled_max = hi / scale;
    float zp = (qmin + descaled_min) + (qmax + descaled_max) > 0 ? qmin - descaled_min
                                                                 : qmax - descaled_max;
    zp = std::nearbyint(std::min(std::max(zp, qmin), qmax));
    scales[r] = scale;
    zps[r] = std::isnan(zp) ? 0 : static_cast<int64_t>(zp);
  }
  ET_RETURN_IF_ERROR(store_dense(ctx, scales, *scale_out));
  return store_dense(ctx, zps, *zero_point_out);
}

ET_REGISTER_KERNEL("quantized_decomposed::choose_qparams_per_token_asymmetric.out",
                   choose_qparams_per_token_asymmetric_out);

}  // namespace
}  // namespace et::kernels
