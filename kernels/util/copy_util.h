// Moving tensor elements around without looking at their values: strided copies,
// reshapes, and shape helpers shared by the view-like ops.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/util/shape_util.h"
#include "runtime/core/kernel.h"

namespace et::kernels {

Shape shape_of(const Tensor& t);

// Copies a `shape`-shaped block of `elsize`-byte elements between two strided layouts
// (strides in elements). Runs where both innermost strides are 1 go by memmove: a corrupted
// program can plan the two blocks over each other, which must give wrong values, never
// undefined behaviour (kernels copy tensor bytes by memmove, never memcpy).
void strided_copy(const Shape& shape, const void* src, const int64_t* src_strides, void* dst,
                  const int64_t* dst_strides, size_t elsize);

// A copy described dim by dim: each dim's size and its element strides in the source and
// the destination, for views that split and merge dims (pixel shuffle and unshuffle).
struct StridedWalk {
  Shape shape;
  std::array<int64_t, kMaxRank> src{}, dst{};
  // The first `dims` dims, which `self` and `out` share.
  static StridedWalk leading(const Tensor& self, const Tensor& out, int dims);
  // REQUIRES: fewer than kMaxRank dims so far.
  void add(int64_t size, int64_t src_stride, int64_t dst_stride);
  // strided_copy of self's elements into out along the walk.
  void copy(const Tensor& self, Tensor& out) const;
};

// Copies consecutive chunks of `self` along `dim` into `outs`, chunk k `sizes[k]` long
// (the split ops), sizing each output. REQUIRES: one size per output, none negative,
// adding up to at most self's size at `dim`.
Status copy_chunks(const KernelContext& ctx, const Tensor& self, int dim,
                   std::span<const int64_t> sizes, std::span<Tensor* const> outs);

// Copies src into out element by element in logical (row-major) order: a reshape when
// the shapes differ, a layout change when only the dim orders do. REQUIRES: same dtype
// and numel, out already sized.
Status copy_logical(const KernelContext& ctx, const Tensor& src, Tensor& out);

// Wraps a possibly negative dim into [0, rank); InvalidArgument naming the op.
Result<int> wrap_dim(const KernelContext& ctx, int64_t dim, int rank);

// Resolves a view/reshape size list (one entry may be -1) for `numel` elements.
Result<Shape> resolve_view_shape(const KernelContext& ctx, std::span<const int64_t> sizes,
                                 int64_t numel);

}  // namespace et::kernels
