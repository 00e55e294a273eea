// aten::upsample_nearest2d.vec_out(Tensor input, SymInt[]? output_size,
//     float[]? scale_factors, *, Tensor(a!) out)
#include <algorithm>
#include <cstring>

#include "kernels/util/dense.h"
#include "kernels/util/upsample.h"

namespace et::kernels {
namespace {

Status upsample_nearest2d_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* in, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto output_size, ctx.optional_int_list_arg(1));
  if (ctx.num_args() < 4) return ctx.fail("arguments are missing");
  std::optional<std::span<const double>> scales;
  if (ctx.arg(2).kind() == ValueKind::kDoubleList) scales = ctx.arg(2).double_list();
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (in->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  ET_ASSIGN_OR_RETURN(UpsampleGeometry g, upsample_geometry(ctx, *in, output_size, scales, false));
  ET_RETURN_IF_ERROR(
      resize_output(ctx, *out, Shape{{in->size(0), in->size(1), g.out_h, g.out_w}, 4}));
  const int64_t planes = in->size(0) * in->size(1);
  const int64_t elsize = static_cast<int64_t>(in->element_size());
  const auto* src = static_cast<const uint8_t*>(in->data());
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t n = p / in->size(1), c = p % in->size(1);
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const int64_t ih = std::min(
          static_cast<int64_t>(std::floor(static_cast<double>(oh) * g.scale_h)), g.in_h - 1);
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t iw = std::min(
            static_cast<int64_t>(std::floor(static_cast<double>(ow) * g.scale_w)), g.in_w - 1);
        const int64_t from =
            n * in->stride(0) + c * in->stride(1) + ih * in->stride(2) + iw * in->stride(3);
        const int64_t to =
            n * out->stride(0) + c * out->stride(1) + oh * out->stride(2) + ow * out->stride(3);
        std::memmove(dst + to * elsize, src + from * elsize, static_cast<size_t>(elsize));
      }
    }
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::upsample_nearest2d.vec_out", upsample_nearest2d_out);

}  // namespace
}  // namespace et::kernels
