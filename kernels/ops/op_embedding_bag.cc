// aten::_embedding_bag.out(Tensor weight, Tensor indices, Tensor offsets,
//     bool scale_grad_by_freq=False, int mode=0, bool sparse=False,
//     Tensor? per_sample_weights=None, bool include_last_offset=False,
//     int padding_idx=-1, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2,
//     Tensor(d!) out3)
// nn.EmbeddingBag (recommendation models): bag b holds indices[offsets[b] ..
// offsets[b + 1]); out0[b] is the sum (mode 0), mean (1) or elementwise max (2) of
// their weight rows, per_sample_weights scaling each row (sum only), rows equal to
// padding_idx skipped, an empty bag zeros. The other outputs are what the backward
// pass reads: the bag of each index, each bag's size, and for max the row each
// maximum came from.
#include <fmt/format.h>

#include <limits>

#include "kernels/util/dense.h"
#include "kernels/util/index_util.h"

namespace et::kernels {
namespace {

constexpr int64_t kSum = 0, kMean = 1, kMax = 2;

// Writes `values` (row-major, `n` of them) into `t` when t holds exactly n elements.
Status fill_aux(const KernelContext& ctx, Tensor& t, const std::vector<int64_t>& values) {
  if (static_cast<size_t>(t.numel()) != values.size()) return Status();  // unused by inference
  return store_dense<int64_t>(ctx, values.data(), t);
}

Status embedding_bag_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* weight, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* indices, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* offsets, ctx.input(2));
  ET_ASSIGN_OR_RETURN(int64_t mode, ctx.int_arg(4));
  ET_ASSIGN_OR_RETURN(const Tensor* per_sample, ctx.optional_input(6));
  ET_ASSIGN_OR_RETURN(bool include_last_offset, ctx.bool_arg(7));
  ET_ASSIGN_OR_RETURN(int64_t padding_idx, ctx.int_arg(8));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(9));
  ET_ASSIGN_OR_RETURN(Tensor * offset2bag_out, ctx.output(10));
  ET_ASSIGN_OR_RETURN(Tensor * bag_size_out, ctx.output(11));
  ET_ASSIGN_OR_RETURN(Tensor * max_indices_out, ctx.output(12));
  if (weight->dim() != 2) return ctx.fail("the weight must be 2-d");
  if (indices->dim() != 1 || offsets->dim() != 1) {
    return ctx.fail("indices and offsets must be 1-d (a 2-d input is flattened by export)");
  }
  if (mode != kSum && mode != kMean && mode != kMax) {
    return ctx.fail(fmt::format("mode {} is not 0 (sum), 1 (mean) or 2 (max)", mode));
  }
  if (per_sample != nullptr && (mode != kSum || per_sample->numel() != indices->numel())) {
    return ctx.fail("per_sample_weights need mode sum and one weight per index");
  }
  if (out->dtype() != weight->dtype()) return ctx.fail("output and weight dtypes differ");
  const int64_t rows = weight->size(0), dim = weight->size(1), n = indices->numel();
  ET_ASSIGN_OR_RETURN(const int64_t* idx, checked_indices(ctx, *indices, rows));
  std::vector<int64_t> bounds(static_cast<size_t>(offsets->numel()));
  if (!bounds.empty()) {
    ET_ASSIGN_OR_RETURN(const int64_t* raw, dense_as<int64_t>(ctx, *offsets));
    bounds.assign(raw, raw + offsets->numel());
  }
  if (!include_last_offset) bounds.push_back(n);
  if (bounds.empty()) return ctx.fail("include_last_offset needs at least one offset");
  const int64_t bags = static_cast<int64_t>(bounds.size()) - 1;
  for (size_t b = 0; b + 1 < bounds.size(); ++b) {
    if (bounds[b] < 0 || bounds[b] > bounds[b + 1] || bounds[b + 1] > n) {
      return ctx.fail(
          fmt::format("offsets must rise from 0 to at most {} indices; bag {} is "
                      "[{}, {})",
                      n, b, bounds[b], bounds[b + 1]));
    }
  }
  // nn.EmbeddingBag passes a padding_idx already in [0, rows); -1 means none.
  ET_ASSIGN_OR_RETURN(const double* w, dense_as<double>(ctx, *weight));
  ET_ASSIGN_OR_RETURN(const double* scales, optional_dense_as<double>(ctx, per_sample));
  Shape shape{{bags, dim}, 2};
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  ET_ASSIGN_OR_RETURN(double* result, dense_result<double>(ctx, *out));
  std::vector<int64_t> offset2bag(static_cast<size_t>(n), 0), bag_size(static_cast<size_t>(bags));
  std::vector<int64_t> max_from(mode == kMax ? static_cast<size_t>(bags * dim) : 0, -1);
  for (int64_t b = 0; b < bags; ++b) {
    double* row = result + b * dim;
    std::fill(row, row + dim, mode == kMax ? -std::numeric_limits<double>::infinity() : 0.0);
    int64_t count = 0;
    for (int64_t i = bounds[b]; i < bounds[b + 1]; ++i) {
      offset2bag[i] = b;
      if (idx[i] == padding_idx) continue;
      ++count;
      const double* src = w + idx[i] * dim;
      const double scale = scales != nullptr ? scales[i] : 1.0;
      for (int64_t d = 0; d < dim; ++d) {
        if (mode == kMax) {
          if (src[d] > row[d] || max_from[b * dim + d] < 0) {
            row[d] = src[d];
            max_from[b * dim + d] = idx[i];
          }
        } else {
          row[d] += src[d] * scale;
        }
      }
    }
    bag_size[b] = count;
    if (count == 0) std::fill(row, row + dim, 0.0);
    if (mode == kMean && count > 0) {
      for (int64_t d = 0; d < dim; ++d) row[d] /= static_cast<double>(count);
    }
  }
  ET_RETURN_IF_ERROR(store_dense<double>(ctx, result, *out));
  ET_RETURN_IF_ERROR(fill_aux(ctx, *offset2bag_out, offset2bag));
  ET_RETURN_IF_ERROR(fill_aux(ctx, *bag_size_out, bag_size));
  return fill_aux(ctx, *max_indices_out, mode == kMax ? max_from : bag_size);
}

ET_REGISTER_KERNEL("aten::_embedding_bag.out", embedding_bag_out);

}  // namespace
}  // namespace et::kernels
