// llama::update_cache.out(Tensor value, Tensor(a!) cache, SymInt start_pos, *,
//     Tensor(b!) out) -> Tensor(b!)
// llama::update_cache_with_indices.out(Tensor value, Tensor(a!) cache, SymInt start_pos,
//     Tensor indices, *, Tensor(b!) out) -> Tensor(b!)
// ExecuTorch's LLM export flow writes a decoder's KV cache with these: value
// [batch, seq, heads, head_dim] goes into cache [batch, max_seq, heads, head_dim] at
// positions start_pos .. start_pos + seq - 1 (or at indices[b][s]). The cache is
// written in place; `out` is a placeholder the exporter plans and nobody reads.
#include <fmt/format.h>

#include <cstring>

#include "kernels/util/index_util.h"

namespace et::kernels {
namespace {

Status check_shapes(const KernelContext& ctx, const Tensor& value, const Tensor& cache) {
  if (value.dim() != 4 || cache.dim() != 4) {
    return ctx.fail(fmt::format("value and cache must be 4-D, not {} and {}",
                                shape_string(value.sizes()), shape_string(cache.sizes())));
  }
  if (value.dtype() != cache.dtype()) {
    return ctx.fail(fmt::format("value is {}, the cache {}", scalar_type_name(value.dtype()),
                                scalar_type_name(cache.dtype())));
  }
  for (int d : {0, 2, 3}) {
    if (value.size(d) != cache.size(d)) {
      return ctx.fail(fmt::format("value {} and cache {} differ in dim {}",
                                  shape_string(value.sizes()), shape_string(cache.sizes()), d));
    }
  }
  return Status();
}

// Copies value[b, s] to cache[b, position(b, s)] (positions already checked), in runs
// of the elements contiguous in both: a position's heads x head_dim at once when both
// lay them out densely, else each head's head_dim, else element by element.
template <typename Position>
void copy_rows(const Tensor& value, Tensor& cache, Position position) {
  const int64_t elsize = value.element_size();
  const auto* in = static_cast<const uint8_t*>(value.data());
  auto* o = static_cast<uint8_t*>(cache.mutable_data());
  if (value.numel() == 0) return;
  const int64_t heads = value.size(2), dim = value.size(3);
  const bool rows_dense = value.stride(3) == 1 && cache.stride(3) == 1;
  const bool heads_dense = rows_dense && value.stride(2) == dim && cache.stride(2) == dim;
  const int64_t run = heads_dense ? heads * dim : rows_dense ? dim : 1;
  const int64_t head_runs = heads_dense ? 1 : heads, runs_per_head = heads_dense ? 1 : dim / run;
  for (int64_t b = 0; b < value.size(0); ++b) {
    for (int64_t s = 0; s < value.size(1); ++s) {
      const int64_t p = position(b, s);
      for (int64_t h = 0; h < head_runs; ++h) {
        for (int64_t d = 0; d < runs_per_head * run; d += run) {
          const int64_t src =
              b * value.stride(0) + s * value.stride(1) + h * value.stride(2) + d * value.stride(3);
          const int64_t dst =
              b * cache.stride(0) + p * cache.stride(1) + h * cache.stride(2) + d * cache.stride(3);
          std::memmove(o + dst * elsize, in + src * elsize, static_cast<size_t>(run * elsize));
        }
      }
    }
  }
}

Status update_cache_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* value, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * cache, ctx.output(1));
  ET_ASSIGN_OR_RETURN(int64_t start, ctx.int_arg(2));
  ET_RETURN_IF_ERROR(check_shapes(ctx, *value, *cache));
  if (start < 0 || start > cache->size(1) || value->size(1) > cache->size(1) - start) {
    return ctx.fail(fmt::format("positions {} .. {} are outside a cache of {}", start,
                                start + value->size(1) - 1, cache->size(1)));
  }
  copy_rows(*value, *cache, [start](int64_t, int64_t s) { return start + s; });
  return Status();
}

Status update_cache_with_indices_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* value, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * cache, ctx.output(1));
  ET_ASSIGN_OR_RETURN(const Tensor* indices, ctx.input(3));
  ET_RETURN_IF_ERROR(check_shapes(ctx, *value, *cache));
  if (indices->dim() != 2 || indices->size(0) != value->size(0) ||
      indices->size(1) != value->size(1)) {
    return ctx.fail(fmt::format("indices {} must be [batch, seq] of value {}",
                                shape_string(indices->sizes()), shape_string(value->sizes())));
  }
  ET_ASSIGN_OR_RETURN(const int64_t* idx, checked_indices(ctx, *indices, cache->size(1)));
  const int64_t seq = value->size(1);
  copy_rows(*value, *cache, [idx, seq](int64_t b, int64_t s) { return idx[b * seq + s]; });
  return Status();
}

ET_REGISTER_KERNEL("llama::update_cache.out", update_cache_out);
ET_REGISTER_KERNEL("llama::update_cache_with_indices.out", update_cache_with_indices_out);

}  // namespace
}  // namespace et::kernels
