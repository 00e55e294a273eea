// Reflection and replication padding (aten::reflection_padNd, aten::replication_padNd)
// of the last 1, 2 or 3 dims, shared by the six op files.
//
// padding lists (before, after) pairs from the last dim backwards. A negative value
// crops. Input: rank k+1 or k+2 for k padded dims; the leading (batch) dim of the
// k+2 form may be empty, every other dim must not. Each output index maps to an input
// index with PyTorch's formulas (which also define how cropping and padding mix).
#pragma once

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "kernels/util/copy_util.h"

namespace et::kernels {

enum class EdgePadMode { kReflect, kReplicate };

template <EdgePadMode kMode, int kDims>
Status edge_pad_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto padding, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (self->dtype() == ScalarType::kBool) return ctx.fail("bool tensors cannot be padded");
  const int rank = self->dim();
  if (rank != kDims + 1 && rank != kDims + 2) {
    return ctx.fail(fmt::format("expected a rank-{} or rank-{} tensor, got {}", kDims + 1,
                                kDims + 2, shape_string(self->sizes())));
  }
  for (int d = rank == kDims + 2 ? 1 : 0; d < rank; ++d) {
    if (self->size(d) == 0) {
      return ctx.fail(
          fmt::format("only the batch dim may be empty, got {}", shape_string(self->sizes())));
    }
  }
  if (static_cast<int>(padding.size()) != 2 * kDims) {
    return ctx.fail(fmt::format("{} padding values for {} padded dims", padding.size(), kDims));
  }
  Shape shape = shape_of(*self);
  std::array<std::vector<int64_t>, kDims> source;  // input index per output index
  for (int k = 0; k < kDims; ++k) {
    const int d = rank - 1 - k;
    const int64_t before = padding[2 * k], after = padding[2 * k + 1];
    constexpr int64_t kMaxPad = int64_t{1} << 30;  // bounded before any arithmetic
    if (before < -kMaxPad || before > kMaxPad || after < -kMaxPad || after > kMaxPad) {
      return ctx.fail("a padding value is out of range");
    }
    const int64_t n = self->size(d);
    if (kMode == EdgePadMode::kReflect && (before >= n || after >= n)) {
      return ctx.fail(fmt::format("padding ({}, {}) should be less than the size {} of dim {}",
                                  before, after, n, d));
    }
    shape.sizes[d] = n + before + after;
    if (shape.sizes[d] < 1) {
      return ctx.fail(
          fmt::format("padding ({}, {}) leaves dim {} of size {} empty", before, after, d, n));
    }
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  if (out->numel() == 0) return Status();
  for (int k = 0; k < kDims; ++k) {
    const int d = rank - 1 - k;
    const int64_t before = padding[2 * k], n = self->size(d);
    const int64_t in_start = std::max<int64_t>(0, -before);
    const int64_t out_start = std::max<int64_t>(0, before);
    auto& map = source[k];
    map.resize(static_cast<size_t>(shape.sizes[d]));
    for (int64_t j = 0; j < shape.sizes[d]; ++j) {
      int64_t i;
      if (j < before) {
        i = kMode == EdgePadMode::kReflect ? 2 * before - j : before;
      } else if (j < n + before) {
        i = j;
      } else {
        i = kMode == EdgePadMode::kReflect ? 2 * (n + before - 1) - j : n + before - 1;
      }
      i = i - out_start + in_start;
      if (i < 0 || i >= n) return ctx.fail("padding maps outside the input");
      map[static_cast<size_t>(j)] = i;
    }
  }
  const size_t elsize = self->element_size();
  const auto* in = static_cast<const uint8_t*>(self->data());
  auto* o = static_cast<uint8_t*>(out->mutable_data());
  std::array<int64_t, kMaxRank> pos{};
  for (int64_t n = 0; n < out->numel(); ++n) {
    int64_t src = 0, dst = 0;
    for (int d = 0; d < rank; ++d) {
      const int k = rank - 1 - d;
      src += (k < kDims ? source[k][static_cast<size_t>(pos[d])] : pos[d]) * self->stride(d);
      dst += pos[d] * out->stride(d);
    }
    std::memmove(o + dst * static_cast<int64_t>(elsize), in + src * static_cast<int64_t>(elsize),
                 elsize);
    for (int d = rank - 1; d >= 0; --d) {
      if (++pos[d] < shape.sizes[d]) break;
      pos[d] = 0;
    }
  }
  return Status();
}

}  // namespace et::kernels
