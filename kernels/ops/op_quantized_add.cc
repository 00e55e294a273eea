// quantized_decomposed::add.out(Tensor a, float a_scale, int a_zero_point,
//     int a_quant_min, int a_quant_max, Tensor b, float b_scale, int b_zero_point,
//     int b_quant_min, int b_quant_max, float out_scale, int out_zero_point,
//     int out_quant_min, int out_quant_max, *, Tensor(a!) out) -> Tensor(a!)
// The sum of two quantized tensors of one shape and dtype, requantized: in float32,
// (a - a_zero_point) * a_scale + (b - b_zero_point) * b_scale, then quantized to
// out_scale/out_zero_point (ties to even) and clamped to [out_quant_min,
// out_quant_max]. As ExecuTorch's kernel, the ranges must lie in [0, 255].
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

struct Quant {
  float scale;
  int64_t zero_point, qmin, qmax;
};

Result<Quant> quant_args(const KernelContext& ctx, size_t first) {
  Quant q{};
  ET_ASSIGN_OR_RETURN(double scale, ctx.double_arg(first));
  ET_ASSIGN_OR_RETURN(q.zero_point, ctx.int_arg(first + 1));
  ET_ASSIGN_OR_RETURN(q.qmin, ctx.int_arg(first + 2));
  ET_ASSIGN_OR_RETURN(q.qmax, ctx.int_arg(first + 3));
  q.scale = convert_value<float>(scale);
  if (q.qmin < 0 || q.qmin > q.qmax || q.qmax > 255) {
    return ctx.fail(fmt::format("quant range [{}, {}] is not inside [0, 255]", q.qmin, q.qmax));
  }
  return q;
}

Status quantized_add_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* a, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Quant qa, quant_args(ctx, 1));
  ET_ASSIGN_OR_RETURN(const Tensor* b, ctx.input(5));
  ET_ASSIGN_OR_RETURN(Quant qb, quant_args(ctx, 6));
  ET_ASSIGN_OR_RETURN(Quant qo, quant_args(ctx, 10));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(14));
  int64_t lo = 0, hi = 0;
  if (!quantized_type_range(a->dtype(), &lo, &hi) || b->dtype() != a->dtype() ||
      out->dtype() != a->dtype() || a->sizes().size() != b->sizes().size() ||
      !std::equal(a->sizes().begin(), a->sizes().end(), b->sizes().begin())) {
    return ctx.fail(
        fmt::format("a {} {} and b {} {} must be integer tensors of one shape and "
                    "dtype, out of that dtype too",
                    shape_string(a->sizes()), scalar_type_name(a->dtype()),
                    shape_string(b->sizes()), scalar_type_name(b->dtype())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape_of(*a)));
  if (out->numel() == 0) return Status();
  ET_ASSIGN_OR_RETURN(const int64_t* x, dense_as<int64_t>(ctx, *a));
  ET_ASSIGN_OR_RETURN(const int64_t* y, dense_as<int64_t>(ctx, *b));
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({out->numel()}, sizeof(float)));
  auto* q = static_cast<float*>(scratch);
  const float inv = 1.0f / qo.scale;
  for (int64_t i = 0; i < out->numel(); ++i) {
    const auto da = static_cast<float>(
        (static_cast<double>(x[i]) - static_cast<double>(qa.zero_point)) * qa.scale);
    const auto db = static_cast<float>(
        (static_cast<double>(y[i]) - static_cast<double>(qb.zero_point)) * qb.scale);
    const float v = static_cast<float>(qo.zero_point) + std::nearbyint(inv * (da + db));
    q[i] = nan_to(std::min(std::max(v, static_cast<float>(qo.qmin)), static_cast<float>(qo.qmax)),
                  qo.qmin);
  }
  return store_dense(ctx, q, *out);
}

ET_REGISTER_KERNEL("quantized_decomposed::add.out", quantized_add_out);

}  // namespace
}  // namespace et::kernels
