// Helpers for the factory ops that take a size list (ones, zeros, empty, rand, ...).
#pragma once

#include <fmt/format.h>

#include <cstring>

#include "kernels/util/fill.h"
#include "kernels/util/shape_util.h"

namespace et::kernels {

// Resizes out to `sizes` (negative sizes or a rank past kMaxRank fail).
inline Status resize_to_sizes(const KernelContext& ctx, Tensor& out,
                              std::span<const int64_t> sizes) {
  if (sizes.size() > static_cast<size_t>(kMaxRank)) return ctx.fail("rank above 16");
  Shape shape;
  shape.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < shape.rank; ++d) {
    if (sizes[d] < 0) return ctx.fail(fmt::format("negative size {} in dim {}", sizes[d], d));
    shape.sizes[d] = sizes[d];
  }
  return resize_output(ctx, out, shape);
}

// aten::ones.out / aten::zeros.out(SymInt[] size, *, Tensor(a!) out)
template <int kValue>
Status constant_factory_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(auto sizes, ctx.int_list_arg(0));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1));
  ET_RETURN_IF_ERROR(resize_to_sizes(ctx, *out, sizes));
  Scalar value;
  value.kind = ValueKind::kInt;
  value.i = kValue;
  return fill_with(ctx, *out, value);
}

// The contents of a tensor from `empty`, whose values no program may rely on: zeroes,
// so that nothing left in the memory by an earlier request is ever returned.
inline Status zero_fill(Tensor& out) {
  if (out.nbytes() > 0) std::memset(out.mutable_data(), 0, out.nbytes());
  return Status();
}

}  // namespace et::kernels
