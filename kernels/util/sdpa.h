// The attention loop of ExecuTorch's LLM custom ops (llama::custom_sdpa,
// sdpa_with_kv_cache, custom_quantized_sdpa), on dense float arrays: query
// [batch, seq, heads, dim] over key/value [batch, cache_len, kv_heads, dim(_v)], the
// first `keys` cache positions attended; kv_heads divides heads (grouped-query
// attention). Causal: query i sits at start_pos + i and sees keys 0 .. start_pos + i.
#pragma once

#include <cstdint>

namespace et::kernels {

struct SdpaShape {
  int64_t batch, seq, heads, kv_heads, dim, dim_v, cache_len, keys, start_pos;
  bool causal;
  int64_t mask_stride = 0;  // the mask's row length; 0: keys
};

// out [batch, seq, heads, dim_v]; mask (nullptr: none) an additive [seq, mask_stride]
// whose first `keys` columns count; scores: scratch of sdpa_scratch_floats(s) floats.
// Per head, the scores of a block of queries are one matrix product (sgemm.h) and their
// weighted values another, so sums are in sgemm's order, not left to right; the
// exponentials are vector_math.h's exp_array. REQUIRES: the caller checked the shapes
// (causal: start_pos + seq <= keys).
void sdpa_f32(const SdpaShape& s, const float* q, const float* k, const float* v, const float* mask,
              float scale, float* out, float* scores);

// The scratch sdpa_f32 needs for `s`, in floats.
int64_t sdpa_scratch_floats(const SdpaShape& s);

}  // namespace et::kernels
