// The body of llama::gated_delta_rule.out and its deprecated twin
// channelwise_gated_delta_rule.out (linear attention of Qwen3-Next-style models):
//
//   query [B, Hq, T, K], key [B, H, T, K], value [B, H, T, V] (Hq a multiple of H),
//   decay [B, H, T, K] or [B, H, T] (the gate, already exponentiated), beta [B, H, T],
//   initial_state [B, H, K, V]; out [B, Hq, T, V], final_state_out [B, H, K, V].
//
// For each batch and state head, from S = initial_state, for t = 0 .. T-1 with g the
// token's decay (per key channel, or one value for all):
//   pred[v]  = sum_k S[k][v] * g[k] * key[k]
//   delta[v] = (value[v] - pred[v]) * beta
//   S[k][v]  = S[k][v] * g[k] + key[k] * delta[v]
//   out[hq][v] = sum_k S[k][v] * query[hq][k]   for the query heads hq of this head
// in float32, each product and sum rounded on its own, sums in k order. This is
// ExecuTorch's recurrence bit for bit; ExecuTorch runs prefills (T > 1) with a chunked
// form equal to it up to float rounding (about 1e-5).
#pragma once

#include "kernels/util/quantize.h"

namespace et::kernels {

inline Status gated_delta_rule(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* query, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* key, ctx.input(1));
  ET_ASSIGN_OR_RETURN(const Tensor* value, ctx.input(2));
  ET_ASSIGN_OR_RETURN(const Tensor* decay, ctx.input(3));
  ET_ASSIGN_OR_RETURN(const Tensor* beta, ctx.input(4));
  ET_ASSIGN_OR_RETURN(const Tensor* initial, ctx.input(5));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(6));
  ET_ASSIGN_OR_RETURN(Tensor * final_state, ctx.output(7));
  for (const Tensor* t : {query, key, value, decay, beta, initial}) {
    if (t->dtype() != ScalarType::kFloat) return ctx.fail("every tensor must be float32");
  }
  if (out->dtype() != ScalarType::kFloat || final_state->dtype() != ScalarType::kFloat) {
    return ctx.fail("out and final_state_out must be float32");
  }
  if (query->dim() != 4 || key->dim() != 4 || value->dim() != 4 || initial->dim() != 4 ||
      beta->dim() != 3) {
    return ctx.fail("query, key, value and initial_state must be 4-D and beta 3-D");
  }
  const int64_t b = key->size(0), h = key->size(1), t = key->size(2), k = key->size(3);
  const int64_t hq = query->size(1), v = value->size(3);
  const bool per_channel = decay->dim() == 4;
  auto is = [](const Tensor* x, std::initializer_list<int64_t> want) {
    return static_cast<size_t>(x->dim()) == want.size() &&
           std::equal(want.begin(), want.end(), x->sizes().begin());
  };
  if (!is(query, {b, hq, t, k}) || !is(value, {b, h, t, v}) || !is(beta, {b, h, t}) ||
      !is(initial, {b, h, k, v}) || h == 0 || hq % h != 0 ||
      !(per_channel ? is(decay, {b, h, t, k}) : is(decay, {b, h, t}))) {
    return ctx.fail(fmt::format(
        "query {}, key {}, value {}, decay {}, beta {}, initial_state {} do not fit together",
        shape_string(query->sizes()), shape_string(key->sizes()), shape_string(value->sizes()),
        shape_string(decay->sizes()), shape_string(beta->sizes()), shape_string(initial->sizes())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{b, hq, t, v}, 4}));
  ET_RETURN_IF_ERROR(resize_output(ctx, *final_state, Shape{{b, h, k, v}, 4}));
  if (final_state->numel() == 0) return Status();
  ET_ASSIGN_OR_RETURN(const float* q, dense_as<float>(ctx, *query));
  ET_ASSIGN_OR_RETURN(const float* kk, dense_as<float>(ctx, *key));
  ET_ASSIGN_OR_RETURN(const float* vv, dense_as<float>(ctx, *value));
  ET_ASSIGN_OR_RETURN(const float* g, dense_as<float>(ctx, *decay));
  ET_ASSIGN_OR_RETURN(const float* be, dense_as<float>(ctx, *beta));
  ET_ASSIGN_OR_RETURN(const float* s0, dense_as<float>(ctx, *initial));
  ET_ASSIGN_OR_RETURN(float* o, dense_result<float>(ctx, *out));
  // The state evolves in scratch and is stored once per head: final_state_out may
  // alias an input (initial_state) without changing it underneath the recurrence.
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({k * v + k + v + 1}, sizeof(float)));
  float* s = static_cast<float*>(scratch);
  float* gk = s + k * v;
  float* delta = gk + k;
  ET_ASSIGN_OR_RETURN(float* sf, dense_result<float>(ctx, *final_state));
  const int64_t rep = hq / h;
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t hi = 0; hi < h; ++hi) {
      const int64_t bh = bi * h + hi;
      std::copy(s0 + bh * k * v, s0 + (bh + 1) * k * v, s);
      for (int64_t ti = 0; ti < t; ++ti) {
        const float* key_t = kk + (bh * t + ti) * k;
        const float* val_t = vv + (bh * t + ti) * v;
        for (int64_t ki = 0; ki < k; ++ki) {
          gk[ki] = per_channel ? g[(bh * t + ti) * k + ki] : g[bh * t + ti];
        }
        const float beta_t = be[bh * t + ti];
        for (int64_t vi = 0; vi < v; ++vi) {
          float pred = 0;
          for (int64_t ki = 0; ki < k; ++ki) {
            const float dk = gk[ki] * key_t[ki];
            pred += s[ki * v + vi] * dk;
          }
          delta[vi] = (val_t[vi] - pred) * beta_t;
        }
        for (int64_t ki = 0; ki < k; ++ki) {
          for (int64_t vi = 0; vi < v; ++vi) {
            const float decayed = s[ki * v + vi] * gk[ki];
            const float update = key_t[ki] * delta[vi];
            s[ki * v + vi] = decayed + update;
          }
        }
        for (int64_t r = 0; r < rep; ++r) {
          const int64_t qh = bi * hq + hi * rep + r;
          const float* q_t = q + (qh * t + ti) * k;
          float* o_t = o + (qh * t + ti) * v;
          for (int64_t vi = 0; vi < v; ++vi) {
            float acc = 0;
            for (int64_t ki = 0; ki < k; ++ki) acc += s[ki * v + vi] * q_t[ki];
            o_t[vi] = acc;
          }
        }
      }
      std::copy(s, s + k * v, sf + bh * k * v);
    }
  }
  ET_RETURN_IF_ERROR(store_dense(ctx, o, *out));
  return store_dense(ctx, sf, *final_state);
}

}  // namespace et::kernels
