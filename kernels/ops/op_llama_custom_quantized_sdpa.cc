// llama::custom_quantized_sdpa.out(Tensor query, Tensor key, Tensor value,
//     SymInt start_pos, Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False,
//     float? scale=None, Tensor? q_zero_points=None, Tensor? q_scales=None,
//     Tensor? k_zero_points=None, Tensor? k_scales=None, Tensor? v_zero_points=None,
//     Tensor? v_scales=None, bool is_seq_at_dim_2=False, *, Tensor(a!) out) -> Tensor(a!)
// llama::custom_sdpa over an int8 KV cache (ExecuTorch's LLM flow with
// quantize_kv_cache): each of query, key and value is either float, or int8 with a
// zero point and scale per token and head ([batch, seq, heads, 1]), dequantized as
// (q - zero_point) * scale before the attention (kernels/util/sdpa.h). The output is
// float32 [batch, seq, heads, dim]. As ExecuTorch's kernel, only the first start_pos +
// seq cache positions are attended, causal or not. Only the sequence-major layout
// (is_seq_at_dim_2=False, what the flow exports) is taken.
#include "kernels/util/quantize.h"
#include "kernels/util/sdpa.h"

namespace et::kernels {
namespace {

struct Operand {
  const Tensor* values;
  const Tensor* zero_points;  // nullptr: a float operand
  const Tensor* scales;
  const char* name;
};

// dst[i] = (src[i] - zero_point) * scale. The pointers cannot alias (int8 may alias
// anything otherwise, which keeps the loop from being vectorised).
void dequantize_row(const int8_t* __restrict src, float zero_point, float scale, int64_t n,
                    float* __restrict dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = (static_cast<float>(src[i]) - zero_point) * scale;
}

// The first `rows` positions (dim 1) of operand [b, len, h, d] as dense floats.
Result<const float*> dequantized(const KernelContext& ctx, const Operand& o, int64_t rows) {
  const Tensor& t = *o.values;
  const int64_t b = t.size(0), len = t.size(1), h = t.size(2), d = t.size(3);
  if (o.zero_points == nullptr && o.scales == nullptr) {
    if (t.dtype() != ScalarType::kFloat) {
      return ctx.fail(fmt::format("{} is {} without zero points and scales; it must be float32",
                                  o.name, scalar_type_name(t.dtype())));
    }
    return dense_as<float>(ctx, t);
  }
  if (o.zero_points == nullptr || o.scales == nullptr || t.dtype() != ScalarType::kChar) {
    return ctx.fail(fmt::format("{} must be int8 with both zero points and scales", o.name));
  }
  for (const Tensor* p : {o.zero_points, o.scales}) {
    if (p->dim() != 4 || p->size(0) != b || p->size(1) != len || p->size(2) != h ||
        p->size(3) != 1) {
      return ctx.fail(fmt::format("{}'s zero points and scales must be [{}, {}, {}, 1], not {}",
                                  o.name, b, len, h, shape_string(p->sizes())));
    }
  }
  // The int8 values as they are (a contiguous cache is read in place, not converted
  // whole: only `rows` positions are used).
  ET_ASSIGN_OR_RETURN(const int8_t* q, dense_as<int8_t>(ctx, t));
  // Zero points as they are when int8 (the flow's), else converted; scales float32.
  const int8_t* zp8 = nullptr;
  const float* zp = nullptr;
  if (o.zero_points->dtype() == ScalarType::kChar) {
    ET_ASSIGN_OR_RETURN(zp8, dense_as<int8_t>(ctx, *o.zero_points));
  } else {
    ET_ASSIGN_OR_RETURN(zp, dense_as<float>(ctx, *o.zero_points));
  }
  ET_ASSIGN_OR_RETURN(const float* sc, dense_as<float>(ctx, *o.scales));
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({b, rows, h, d}, sizeof(float)));
  auto* out = static_cast<float*>(scratch);
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t s = 0; s < rows; ++s)
      for (int64_t hi = 0; hi < h; ++hi) {
        const int64_t token = (bi * len + s) * h + hi;
        const int64_t dst = (bi * rows + s) * h + hi;
        const float z = zp8 != nullptr ? static_cast<float>(zp8[token]) : zp[token];
        dequantize_row(q + token * d, z, sc[token], d, out + dst * d);
      }
  return static_cast<const float*>(out);
}

Status custom_quantized_sdpa_out(KernelContext& ctx) {
  Operand q{}, k{}, v{};
  ET_ASSIGN_OR_RETURN(q.values, ctx.input(0));
  ET_ASSIGN_OR_RETURN(k.values, ctx.input(1));
  ET_ASSIGN_OR_RETURN(v.values, ctx.input(2));
  ET_ASSIGN_OR_RETURN(int64_t start_pos, ctx.int_arg(3));
  ET_ASSIGN_OR_RETURN(const Tensor* mask, ctx.optional_input(4));
  ET_ASSIGN_OR_RETURN(bool causal, ctx.bool_arg(6));
  ET_ASSIGN_OR_RETURN(std::optional<double> scale, ctx.optional_double_arg(7));
  ET_ASSIGN_OR_RETURN(q.zero_points, ctx.optional_input(8));
  ET_ASSIGN_OR_RETURN(q.scales, ctx.optional_input(9));
  ET_ASSIGN_OR_RETURN(k.zero_points, ctx.optional_input(10));
  ET_ASSIGN_OR_RETURN(k.scales, ctx.optional_input(11));
  ET_ASSIGN_OR_RETURN(v.zero_points, ctx.optional_input(12));
  ET_ASSIGN_OR_RETURN(v.scales, ctx.optional_input(13));
  ET_ASSIGN_OR_RETURN(bool seq_at_dim_2, ctx.bool_arg(14));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(15));
  q.name = "query", k.name = "key", v.name = "value";
  if (seq_at_dim_2) {
    return ctx.unsupported("is_seq_at_dim_2=True (the [batch, heads, seq, dim] layout)");
  }
  const Tensor &qt = *q.values, &kt = *k.values, &vt = *v.values;
  if (qt.dim() != 4 || kt.dim() != 4 || vt.dim() != 4) {
    return ctx.fail(fmt::format("query {}, key {} and value {} must be 4-D",
                                shape_string(qt.sizes()), shape_string(kt.sizes()),
                                shape_string(vt.sizes())));
  }
  const int64_t batch = qt.size(0), seq = qt.size(1), heads = qt.size(2), dim = qt.size(3);
  const int64_t kv_heads = kt.size(2), dim_v = vt.size(3), cache_len = kt.size(1);
  if (kt.size(0) != batch || vt.size(0) != batch || kt.size(3) != dim || vt.size(1) != cache_len ||
      vt.size(2) != kv_heads || kv_heads == 0 || heads % kv_heads != 0) {
    return ctx.fail(fmt::format("query {}, key {} and value {} do not fit together",
                                shape_string(qt.sizes()), shape_string(kt.sizes()),
                                shape_string(vt.sizes())));
  }
  if (start_pos < 0 || start_pos > cache_len || seq > cache_len - start_pos) {
    return ctx.fail(fmt::format("positions {} .. {} are outside the {} keys", start_pos,
                                start_pos + seq - 1, cache_len));
  }
  if (mask != nullptr && (mask->dim() != 2 || mask->size(0) != seq || mask->size(1) != cache_len ||
                          !is_quantizable(mask->dtype()))) {
    return ctx.fail(fmt::format("attn_mask {} must be float [{}, {}]", shape_string(mask->sizes()),
                                seq, cache_len));
  }
  if (out->dtype() != ScalarType::kFloat) return ctx.fail("out must be float32");
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{batch, seq, heads, dim_v}, 4}));
  if (out->numel() == 0) return Status();
  // Attention reads only the positions up to the last query's.
  const int64_t rows = start_pos + seq;
  ET_ASSIGN_OR_RETURN(const float* qd, dequantized(ctx, q, seq));
  ET_ASSIGN_OR_RETURN(const float* kd, dequantized(ctx, k, rows));
  ET_ASSIGN_OR_RETURN(const float* vd, dequantized(ctx, v, rows));
  // A float operand is read in place: its rows are the whole cache.
  const bool k_in_place = k.zero_points == nullptr, v_in_place = v.zero_points == nullptr;
  if (k_in_place != v_in_place) return ctx.fail("key and value must both be int8 or both float");
  const float* md = nullptr;
  if (mask != nullptr) {
    ET_ASSIGN_OR_RETURN(md, dense_as<float>(ctx, *mask));
  }
  ET_ASSIGN_OR_RETURN(float* od, dense_result<float>(ctx, *out));
  SdpaShape geometry{batch, seq,       heads, kv_heads, dim, dim_v, k_in_place ? cache_len : rows,
                     rows,  start_pos, causal};
  geometry.mask_stride = cache_len;
  ET_ASSIGN_OR_RETURN(void* scratch,
                      ctx.temp_product({sdpa_scratch_floats(geometry)}, sizeof(float)));
  sdpa_f32(geometry, qd, kd, vd, md,
           static_cast<float>(scale.value_or(1.0 / std::sqrt(static_cast<double>(dim)))), od,
           static_cast<float*>(scratch));
  return store_dense(ctx, od, *out);
}

ET_REGISTER_KERNEL("llama::custom_quantized_sdpa.out", custom_quantized_sdpa_out);

}  // namespace
}  // namespace et::kernels
