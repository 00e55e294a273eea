// Ops that transform each line of a tensor along one dim (softmax, log_softmax,
// cumsum): fn gets the line's values and writes the line's results.
#pragma once

#include "kernels/util/copy_util.h"
#include "kernels/util/elementwise.h"

namespace et::kernels {

// fn(const C* in, int64_t in_stride, C* out, int64_t out_stride, int64_t n) per line.
// out takes in's shape; results are converted to out's dtype.
template <typename C, typename Fn>
Status map_along_dim(const KernelContext& ctx, const Tensor& in, int dim, Tensor& out, Fn&& fn) {
  const Shape shape = shape_of(in);
  ET_RETURN_IF_ERROR(resize_output(ctx, out, shape));
  if (in.numel() == 0) return Status();
  const std::array<int64_t, kMaxRank> row_major = row_major_strides(shape);
  ET_ASSIGN_OR_RETURN(void* in_scratch, ctx.temp(static_cast<size_t>(in.numel()) * sizeof(C)));
  C* values = static_cast<C*>(in_scratch);
  ET_RETURN_IF_ERROR(
      gather_as<C>(ctx, in, shape, {row_major.data(), static_cast<size_t>(shape.rank)}, values));
  C* dst;
  const bool direct = out.dtype() == scalar_type_of<C>();
  if (direct) {
    dst = out.data_as<C>();
  } else {
    ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(static_cast<size_t>(out.numel()) * sizeof(C)));
    dst = static_cast<C*>(scratch);
  }
  Shape lines = shape;
  const int64_t n = shape.rank == 0 ? 1 : shape.sizes[dim];
  if (shape.rank > 0) lines.sizes[dim] = 1;
  const int64_t in_stride = shape.rank == 0 ? 1 : row_major[dim];
  const int64_t out_stride = shape.rank == 0 ? 1 : out.stride(dim);
  const std::array<const int64_t*, 2> strides = {row_major.data(), out.strides().data()};
  for_each_index<2>(lines, strides, [&](const std::array<int64_t, 2>& o) {
    fn(values + o[0], in_stride, dst + o[1], out_stride, n);
  });
  return direct ? Status() : scatter_to<C>(ctx, dst, out);
}

}  // namespace et::kernels
