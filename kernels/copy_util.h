// Moving tensor elements around without looking at their values: strided copies,
// reshapes, and shape helpers shared by the view-like ops.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/shape_util.h"
#include "runtime/kernel.h"

namespace et::kernels {

Shape shape_of(const Tensor& t);

// Copies a `shape`-shaped block of `elsize`-byte elements between two strided layouts
// (strides in elements). Runs where both innermost strides are 1 go by memcpy.
void strided_copy(const Shape& shape, const void* src, const int64_t* src_strides, void* dst,
                  const int64_t* dst_strides, size_t elsize);

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
