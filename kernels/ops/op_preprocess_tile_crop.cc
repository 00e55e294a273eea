// preprocess::tile_crop.out(Tensor input, int tile_size, *, Tensor(a!) out) -> Tensor(a!)
// Vision preprocessing (Llama 3.2 Vision): an image [C, H, W] cut into tiles of
// tile_size x tile_size, row-major tile order: out [nH * nW, C, t, t] with
// out[i * nW + j, c, y, x] = input[c, i * t + y, j * t + x]. H and W must be multiples
// of tile_size; any dtype, out of input's.
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

Status tile_crop_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(int64_t t, ctx.int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (input->dim() != 3 || out->dtype() != input->dtype()) {
    return ctx.fail(fmt::format("input {} {} must be [C, H, W], out of its dtype (is {})",
                                shape_string(input->sizes()), scalar_type_name(input->dtype()),
                                scalar_type_name(out->dtype())));
  }
  const int64_t c = input->size(0), h = input->size(1), w = input->size(2);
  if (t <= 0 || h % t != 0 || w % t != 0) {
    return ctx.fail(fmt::format("tile_size {} does not divide the image's {} x {}", t, h, w));
  }
  const int64_t nh = h / t, nw = w / t;
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{nh * nw, c, t, t}, 4}));
  if (out->numel() == 0) return Status();
  // A view of input as [nH, nW, C, t, t] through its strides, copied into out.
  const int64_t es = static_cast<int64_t>(input->element_size());
  const Shape view{{nh, nw, c, t, t}, 5};
  const int64_t strides[5] = {t * input->stride(1), t * input->stride(2), input->stride(0),
                              input->stride(1), input->stride(2)};
  const std::array<int64_t, kMaxRank> dense = row_major_strides(view);
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(static_cast<size_t>(out->numel() * es) + 1));
  strided_copy(view, input->data(), strides, scratch, dense.data(), input->element_size());
  const Shape shape = shape_of(*out);
  const std::array<int64_t, kMaxRank> row_major = row_major_strides(shape);
  strided_copy(shape, scratch, row_major.data(), out->mutable_data(), out->strides().data(),
               out->element_size());
  return Status();
}

ET_REGISTER_KERNEL("preprocess::tile_crop.out", tile_crop_out);

}  // namespace
}  // namespace et::kernels
