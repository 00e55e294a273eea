// The attention loop of ExecuTorch's LLM custom ops (llama::custom_sdpa,
// sdpa_with_kv_cache, custom_quantized_sdpa), on dense float arrays: query
// [batch, seq, heads, dim] over key/value [batch, cache_len, kv_heads, dim(_v)], the
// first `keys` cache positions attended; kv_heads divides heads (grouped-query
// attention). Causal: query i sits at start_pos + i and sees keys 0 .. start_pos + i.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace et::kernels {

struct SdpaShape {
  int64_t batch, seq, heads, kv_heads, dim, dim_v, cache_len, keys, start_pos;
  bool causal;
  int64_t mask_stride = 0;  // the mask's row length; 0: keys
};

// out [batch, seq, heads, dim_v]; mask (nullptr: none) an additive [seq, mask_stride]
// whose first `keys` columns count;
// scores: scratch of keys floats. REQUIRES: the caller checked the shapes.
inline void sdpa_f32(const SdpaShape& s, const float* q, const float* k, const float* v,
                     const float* mask, float scale, float* out, float* scores) {
  const int64_t group = s.heads / s.kv_heads;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t i = 0; i < s.seq; ++i) {
      const int64_t visible = s.causal ? s.start_pos + i + 1 : s.keys;
      for (int64_t h = 0; h < s.heads; ++h) {
        const float* qv = q + ((b * s.seq + i) * s.heads + h) * s.dim;
        const int64_t g = h / group;
        float top = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          const float* kv = k + ((b * s.cache_len + j) * s.kv_heads + g) * s.dim;
          float dot = 0;
          for (int64_t d = 0; d < s.dim; ++d) dot += qv[d] * kv[d];
          scores[j] =
              dot * scale +
              (mask != nullptr ? mask[i * (s.mask_stride > 0 ? s.mask_stride : s.keys) + j] : 0.0f);
          top = std::max(top, scores[j]);
        }
        float sum = 0;
        for (int64_t j = 0; j < visible; ++j) {
          scores[j] = std::exp(scores[j] - top);
          sum += scores[j];
        }
        float* o = out + ((b * s.seq + i) * s.heads + h) * s.dim_v;
        std::fill(o, o + s.dim_v, 0.0f);
        for (int64_t j = 0; j < visible; ++j) {
          const float p = scores[j] / sum;
          const float* vv = v + ((b * s.cache_len + j) * s.kv_heads + g) * s.dim_v;
          for (int64_t d = 0; d < s.dim_v; ++d) o[d] += p * vv[d];
        }
      }
    }
  }
}

}  // namespace et::kernels
