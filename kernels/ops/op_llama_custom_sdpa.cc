// llama::custom_sdpa.out(Tensor query, Tensor key, Tensor value, SymInt start_pos,
//     Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, float? scale=None,
//     *, Tensor(a!) out) -> Tensor(a!)
// llama::sdpa_with_kv_cache.out(Tensor query, Tensor key, Tensor value,
//     Tensor(a!) key_cache, Tensor(b!) value_cache, SymInt start_pos, SymInt seq_len,
//     Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, float? scale=None,
//     *, Tensor(c!) out) -> Tensor(c!)
// The attention of ExecuTorch's LLM export flow, sequence-major: query
// [batch, seq, heads, head_dim] over key/value [batch, keys, kv_heads, head_dim] (the KV
// cache), kv_heads dividing heads (grouped-query attention). Causal: query i sits at
// position start_pos + i and sees keys 0 .. start_pos + i. Otherwise every key, plus
// the additive float attn_mask [seq, keys] when given. Scale: 1/sqrt(head_dim) unless
// given; dropout is ignored (inference). sdpa_with_kv_cache first writes key/value
// into the caches at start_pos, then attends over their first start_pos + seq_len keys.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/util/dense.h"
#include "kernels/util/sdpa.h"

namespace et::kernels {
namespace {

struct Attention {
  const Tensor* query;
  const Tensor* key;
  const Tensor* value;
  int64_t keys;  // attended key positions (a prefix of key's dim 1)
  int64_t start_pos;
  const Tensor* mask;  // nullptr: none
  bool causal;
  std::optional<double> scale;
};

bool is_float(ScalarType t) {
  return t == ScalarType::kFloat || t == ScalarType::kHalf || t == ScalarType::kBFloat16;
}

Status attend(const KernelContext& ctx, const Attention& a, Tensor& out) {
  const Tensor& q = *a.query;
  const Tensor& k = *a.key;
  const Tensor& v = *a.value;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) {
    return ctx.fail(fmt::format("query {}, key {} and value {} must be 4-D",
                                shape_string(q.sizes()), shape_string(k.sizes()),
                                shape_string(v.sizes())));
  }
  if (!is_float(q.dtype()) || k.dtype() != q.dtype() || v.dtype() != q.dtype() ||
      out.dtype() != q.dtype()) {
    return ctx.fail("query, key, value and out must share one float dtype");
  }
  const int64_t batch = q.size(0), seq = q.size(1), heads = q.size(2), dim = q.size(3);
  const int64_t kv_heads = k.size(2), dim_v = v.size(3);
  if (k.size(0) != batch || v.size(0) != batch || k.size(3) != dim || v.size(1) != k.size(1) ||
      v.size(2) != kv_heads || kv_heads == 0 || heads % kv_heads != 0) {
    return ctx.fail(fmt::format("query {}, key {} and value {} do not fit together",
                                shape_string(q.sizes()), shape_string(k.sizes()),
                                shape_string(v.sizes())));
  }
  if (a.keys < 0 || a.keys > k.size(1)) {
    return ctx.fail(fmt::format("{} keys asked of a cache of {}", a.keys, k.size(1)));
  }
  if (a.causal && (a.start_pos < 0 || a.start_pos > a.keys || seq > a.keys - a.start_pos)) {
    return ctx.fail(fmt::format("positions {} .. {} are outside the {} keys", a.start_pos,
                                a.start_pos + seq - 1, a.keys));
  }
  if (a.mask != nullptr && (a.mask->dim() != 2 || a.mask->size(0) != seq ||
                            a.mask->size(1) != a.keys || !is_float(a.mask->dtype()))) {
    return ctx.fail(fmt::format("attn_mask {} must be float [{}, {}]",
                                shape_string(a.mask->sizes()), seq, a.keys));
  }
  const std::array<int64_t, 4> shape = {batch, seq, heads, dim_v};
  Status resized = out.resize(std::span<const int64_t>(shape.data(), 4));
  if (!resized.ok()) return ctx.fail(fmt::format("output: {}", resized.message()));
  if (out.numel() == 0) return Status();
  ET_ASSIGN_OR_RETURN(const float* qd, dense_as<float>(ctx, q));
  ET_ASSIGN_OR_RETURN(const float* kd, dense_as<float>(ctx, k));
  ET_ASSIGN_OR_RETURN(const float* vd, dense_as<float>(ctx, v));
  const float* md = nullptr;
  if (a.mask != nullptr) {
    ET_ASSIGN_OR_RETURN(md, dense_as<float>(ctx, *a.mask));
  }
  ET_ASSIGN_OR_RETURN(float* od, dense_result<float>(ctx, out));
  const SdpaShape geometry{batch, seq,       heads,  kv_heads,    dim,
                           dim_v, k.size(1), a.keys, a.start_pos, a.causal};
  ET_ASSIGN_OR_RETURN(void* scratch,
                      ctx.temp_product({sdpa_scratch_floats(geometry)}, sizeof(float)));
  sdpa_f32(geometry, qd, kd, vd, md,
           static_cast<float>(a.scale.value_or(1.0 / std::sqrt(static_cast<double>(dim)))), od,
           static_cast<float*>(scratch));
  return store_dense(ctx, od, out);
}

Status custom_sdpa_out(KernelContext& ctx) {
  Attention a{};
  ET_ASSIGN_OR_RETURN(a.query, ctx.input(0));
  ET_ASSIGN_OR_RETURN(a.key, ctx.input(1));
  ET_ASSIGN_OR_RETURN(a.value, ctx.input(2));
  ET_ASSIGN_OR_RETURN(a.start_pos, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(a.mask, ctx.optional_input(4));
  ET_ASSIGN_OR_RETURN(a.causal, ctx.bool_arg(6));
  ET_ASSIGN_OR_RETURN(a.scale, ctx.optional_double_arg(7));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(8));
  a.keys = a.key->dim() == 4 ? a.key->size(1) : 0;
  return attend(ctx, a, *out);
}

// Writes src [batch, seq, kv_heads, dim] into cache at start_pos (shapes checked).
Status write_cache(const KernelContext& ctx, const Tensor& src, Tensor& cache, int64_t start) {
  if (src.dim() != 4 || cache.dim() != 4 || src.dtype() != cache.dtype() ||
      src.size(0) != cache.size(0) || src.size(2) != cache.size(2) ||
      src.size(3) != cache.size(3)) {
    return ctx.fail(fmt::format("{} does not fit a cache of {}", shape_string(src.sizes()),
                                shape_string(cache.sizes())));
  }
  if (start < 0 || start > cache.size(1) || src.size(1) > cache.size(1) - start) {
    return ctx.fail(fmt::format("positions {} .. {} are outside a cache of {}", start,
                                start + src.size(1) - 1, cache.size(1)));
  }
  const size_t elsize = src.element_size();
  const auto* in = static_cast<const uint8_t*>(src.data());
  auto* o = static_cast<uint8_t*>(cache.mutable_data());
  for (int64_t b = 0; b < src.size(0); ++b)
    for (int64_t s = 0; s < src.size(1); ++s)
      for (int64_t h = 0; h < src.size(2); ++h)
        for (int64_t d = 0; d < src.size(3); ++d) {
          const int64_t from =
              b * src.stride(0) + s * src.stride(1) + h * src.stride(2) + d * src.stride(3);
          const int64_t to = b * cache.stride(0) + (start + s) * cache.stride(1) +
                             h * cache.stride(2) + d * cache.stride(3);
          std::memmove(o + to * static_cast<int64_t>(elsize),
                       in + from * static_cast<int64_t>(elsize), elsize);
        }
  return Status();
}

Status sdpa_with_kv_cache_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* query, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* key, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* value, ctx.input(2));
  ET_ASSIGN_OR_RETURN(Tensor * key_cache, ctx.output(3));
  ET_ASSIGN_OR_RETURN(Tensor * value_cache, ctx.output(4));
  Attention a{};
  ET_ASSIGN_OR_RETURN(a.start_pos, ctx.int_arg(5));
  ET_ASSIGN_OR_RETURN(int64_t seq_len, ctx.int_arg(6));
  ET_ASSIGN_OR_RETURN(a.mask, ctx.optional_input(7));
  ET_ASSIGN_OR_RETURN(a.causal, ctx.bool_arg(9));
  ET_ASSIGN_OR_RETURN(a.scale, ctx.optional_double_arg(10));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(11));
  ET_RETURN_IF_ERROR(write_cache(ctx, *key, *key_cache, a.start_pos));
  ET_RETURN_IF_ERROR(write_cache(ctx, *value, *value_cache, a.start_pos));
  if (seq_len < 0 || seq_len > key_cache->size(1) - a.start_pos) {
    return ctx.fail(fmt::format("seq_len {} from position {} leaves a cache of {}", seq_len,
                                a.start_pos, key_cache->size(1)));
  }
  a.query = query;
  a.key = key_cache;
  a.value = value_cache;
  a.keys = a.start_pos + seq_len;
  return attend(ctx, a, *out);
}

ET_REGISTER_KERNEL("llama::custom_sdpa.out", custom_sdpa_out);
ET_REGISTER_KERNEL("llama::sdpa_with_kv_cache.out", sdpa_with_kv_cache_out);

}  // namespace
}  // namespace et::kernels
