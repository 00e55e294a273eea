#include "kernels/util/advanced_index.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "kernels/util/dense.h"
#include "kernels/util/index_util.h"

namespace et::kernels {
namespace {

// One index tensor after masks are expanded: checked, wrapped int64 values in row-major
// order, of `shape`, indexing self's dim `dim`.
struct IndexTensor {
  int dim = 0;
  Shape shape;
  const int64_t* values = nullptr;
};

bool is_mask(const Tensor& t) {
  return t.dtype() == ScalarType::kBool || t.dtype() == ScalarType::kByte;
}

// A mask covering self's dims [first, first + mask.dim()) as one index tensor per dim.
Status expand_mask(const KernelContext& ctx, const Tensor& self, const Tensor& mask, int first,
                   std::vector<IndexTensor>& out) {
  for (int d = 0; d < mask.dim(); ++d) {
    if (mask.size(d) != self.size(first + d)) {
      return ctx.fail(fmt::format("mask of shape {} does not match dim {} of the indexed shape {}",
                                  shape_string(mask.sizes()), first + d,
                                  shape_string(self.sizes())));
    }
  }
  ET_ASSIGN_OR_RETURN(const int64_t* flags, dense_as<int64_t>(ctx, mask));
  int64_t count = 0;
  for (int64_t i = 0; i < mask.numel(); ++i) count += flags[i] != 0;
  const int k = std::max(mask.dim(), 1);
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({count, k}, sizeof(int64_t)));
  auto* coords = static_cast<int64_t*>(scratch);
  std::array<int64_t, kMaxRank> pos{};
  int64_t n = 0;
  for (int64_t i = 0; i < mask.numel(); ++i) {
    if (flags[i] != 0) {
      for (int d = 0; d < mask.dim(); ++d) coords[d * count + n] = pos[d];
      ++n;
    }
    for (int d = mask.dim() - 1; d >= 0; --d) {
      if (++pos[d] < mask.size(d)) break;
      pos[d] = 0;
    }
  }
  if (mask.dim() == 0) {
    // A 0-d mask adds a dim of size 0 or 1 that indexes nothing; not worth the
    // special case here.
    return ctx.unsupported("a 0-d boolean mask index");
  }
  for (int d = 0; d < mask.dim(); ++d) {
    IndexTensor t;
    t.dim = first + d;
    t.shape.rank = 1;
    t.shape.sizes[0] = count;
    t.values = coords + d * count;
    out.push_back(t);
  }
  return Status();
}

}  // namespace

Result<AdvancedIndex> plan_advanced_index(const KernelContext& ctx, const Tensor& self,
                                          std::span<Tensor* const> indices,
                                          std::span<const int64_t> strides) {
  std::vector<IndexTensor> index;
  int dim = 0;
  for (const Tensor* t : indices) {
    const int covers = t != nullptr && is_mask(*t) ? t->dim() : 1;
    if (dim + covers > self.dim()) {
      return ctx.fail(fmt::format("too many indices for a tensor of rank {}", self.dim()));
    }
    if (t == nullptr) {
      ++dim;
      continue;
    }
    if (is_mask(*t)) {
      ET_RETURN_IF_ERROR(expand_mask(ctx, self, *t, dim, index));
    } else {
      IndexTensor it;
      it.dim = dim;
      it.shape = shape_of(*t);
      ET_ASSIGN_OR_RETURN(it.values, checked_indices(ctx, *t, self.size(dim)));
      index.push_back(it);
    }
    dim += covers;
  }
  AdvancedIndex plan;
  if (index.empty()) {  // only None: the whole tensor
    plan.result = shape_of(self);
    ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({self.numel(), 1}, sizeof(int64_t)));
    auto* offsets = static_cast<int64_t*>(scratch);
    int64_t n = 0;
    const std::array<const int64_t*, 1> s = {strides.data()};
    for_each_index<1>(plan.result, s,
                      [&](const std::array<int64_t, 1>& o) { offsets[n++] = o[0]; });
    plan.offsets = offsets;
    return plan;
  }
  // The broadcast shape of the index tensors.
  Shape ishape = index[0].shape;
  for (size_t k = 1; k < index.size(); ++k) {
    const Shape& t = index[k].shape;
    Shape next;
    next.rank = std::max(ishape.rank, t.rank);
    for (int d = 0; d < next.rank; ++d) {
      const int a = d - (next.rank - ishape.rank), b = d - (next.rank - t.rank);
      const int64_t sa = a >= 0 ? ishape.sizes[a] : 1, sb = b >= 0 ? t.sizes[b] : 1;
      if (sa != sb && sa != 1 && sb != 1) {
        return ctx.fail(fmt::format("index tensors of shapes {} and {} do not broadcast together",
                                    shape_string(ishape.view()), shape_string(t.view())));
      }
      next.sizes[d] = sa == 1 ? sb : sa;
    }
    ishape = next;
  }
  bool adjacent = true;
  for (size_t k = 1; k < index.size(); ++k) adjacent &= index[k].dim == index[k - 1].dim + 1;
  // Result: [whole dims before, index shape, whole dims after], or the index shape first.
  std::vector<int> whole;
  for (int d = 0; d < self.dim(); ++d) {
    if (std::none_of(index.begin(), index.end(), [d](const IndexTensor& t) { return t.dim == d; }))
      whole.push_back(d);
  }
  if (static_cast<int>(whole.size()) + ishape.rank > kMaxRank) {
    return ctx.fail(fmt::format("the result would have rank above {}", kMaxRank));
  }
  const int insert_at = adjacent ? index[0].dim : 0;
  // For each result dim: the self stride it moves by (0 for index dims).
  std::array<int64_t, kMaxRank> result_strides{};
  size_t w = 0;
  Shape& result = plan.result;
  for (; w < whole.size() && whole[w] < insert_at; ++w) {
    result_strides[result.rank] = strides[whole[w]];
    result.sizes[result.rank++] = self.size(whole[w]);
  }
  const int index_start = result.rank;
  for (int d = 0; d < ishape.rank; ++d) result.sizes[result.rank++] = ishape.sizes[d];
  for (; w < whole.size(); ++w) {
    result_strides[result.rank] = strides[whole[w]];
    result.sizes[result.rank++] = self.size(whole[w]);
  }
  // The self offset each position of the index shape selects.
  int64_t icount = 1;
  for (int d = 0; d < ishape.rank; ++d) icount *= ishape.sizes[d];
  ET_ASSIGN_OR_RETURN(void* base_scratch, ctx.temp_product({icount, 1}, sizeof(int64_t)));
  auto* base = static_cast<int64_t*>(base_scratch);
  std::fill(base, base + icount, 0);
  const std::array<int64_t, kMaxRank> dense = row_major_strides(ishape);
  for (const IndexTensor& t : index) {
    // t's strides seen from the broadcast shape.
    std::array<int64_t, kMaxRank> src{};
    const std::array<int64_t, kMaxRank> own = row_major_strides(t.shape);
    const int lead = ishape.rank - t.shape.rank;
    for (int d = 0; d < t.shape.rank; ++d) src[lead + d] = t.shape.sizes[d] == 1 ? 0 : own[d];
    const std::array<const int64_t*, 2> s = {src.data(), dense.data()};
    const int64_t stride = strides[t.dim];
    for_each_index<2>(
        ishape, s, [&](const std::array<int64_t, 2>& o) { base[o[1]] += t.values[o[0]] * stride; });
  }
  int64_t total = 1;
  for (int d = 0; d < result.rank; ++d) total *= result.sizes[d];
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({total, 1}, sizeof(int64_t)));
  auto* offsets = static_cast<int64_t*>(scratch);
  std::array<int64_t, kMaxRank> pos{};
  for (int64_t n = 0; n < total; ++n) {
    int64_t flat = 0, off = 0;
    for (int d = 0; d < result.rank; ++d) {
      if (d >= index_start && d < index_start + ishape.rank) {
        flat = flat * ishape.sizes[d - index_start] + pos[d];
      } else {
        off += pos[d] * result_strides[d];
      }
    }
    offsets[n] = off + base[flat];
    for (int d = result.rank - 1; d >= 0; --d) {
      if (++pos[d] < result.sizes[d]) break;
      pos[d] = 0;
    }
  }
  plan.offsets = offsets;
  return plan;
}

}  // namespace et::kernels
