#include "kernels/util/sdpa.h"

#include <algorithm>
#include <limits>

#include "kernels/math/sgemm.h"
#include "kernels/math/vector_math.h"

namespace et::kernels {
namespace {

// Queries scored together per head: bounds the scratch (rows x keys floats) while
// giving a prefill's products enough rows to use sgemm's tiles.
constexpr int64_t kRowBlock = 64;

// The keys query row i (0-based within the call) attends.
int64_t visible_keys(const SdpaShape& s, int64_t i) {
  return s.causal ? s.start_pos + i + 1 : s.keys;
}

// Turns row `i`'s raw dot products (n of them) into attention weights: scaled, masked,
// softmax over the visible keys, zero beyond them.
void softmax_row(const SdpaShape& s, int64_t i, const float* mask, float scale, float* row,
                 int64_t n) {
  const int64_t visible = visible_keys(s, i);
  const float* m =
      mask == nullptr ? nullptr : mask + i * (s.mask_stride > 0 ? s.mask_stride : s.keys);
  float top = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < visible; ++j) {
    row[j] = row[j] * scale + (m != nullptr ? m[j] : 0.0f);
    top = std::max(top, row[j]);
  }
  for (int64_t j = 0; j < visible; ++j) row[j] -= top;
  exp_array(row, row, visible);
  float sum = 0;
  for (int64_t j = 0; j < visible; ++j) sum += row[j];
  for (int64_t j = 0; j < visible; ++j) row[j] /= sum;
  std::fill(row + visible, row + n, 0.0f);
}

}  // namespace

int64_t sdpa_scratch_floats(const SdpaShape& s) {
  return std::min(s.seq, kRowBlock) * std::max<int64_t>(s.keys, 1);
}

void sdpa_f32(const SdpaShape& s, const float* q, const float* k, const float* v, const float* mask,
              float scale, float* out, float* scores) {
  const int64_t group = s.heads / s.kv_heads;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t g = h / group;
      // Key / value position j of this head's group: rows kv_heads * dim apart.
      const float* keys = k + (b * s.cache_len * s.kv_heads + g) * s.dim;
      const float* values = v + (b * s.cache_len * s.kv_heads + g) * s.dim_v;
      for (int64_t i0 = 0; i0 < s.seq; i0 += kRowBlock) {
        const int64_t rows = std::min(kRowBlock, s.seq - i0);
        // The block's last query sees the most keys.
        const int64_t n = visible_keys(s, i0 + rows - 1);
        sgemm({.m = rows,
               .n = n,
               .k = s.dim,
               .a = q + ((b * s.seq + i0) * s.heads + h) * s.dim,
               .lda = s.heads * s.dim,
               .b = keys,
               .ldb = s.kv_heads * s.dim,
               .b_transposed = true,
               .c = scores,
               .ldc = n});
        for (int64_t r = 0; r < rows; ++r) softmax_row(s, i0 + r, mask, scale, scores + r * n, n);
        sgemm({.m = rows,
               .n = s.dim_v,
               .k = n,
               .a = scores,
               .lda = n,
               .b = values,
               .ldb = s.kv_heads * s.dim_v,
               .c = out + ((b * s.seq + i0) * s.heads + h) * s.dim_v,
               .ldc = s.heads * s.dim_v});
      }
    }
  }
}

}  // namespace et::kernels
