#include "runtime/llm/generation.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>

#include "runtime/core/half.h"

namespace et {
namespace {

// How the method takes tokens and positions.
struct Layout {
  int64_t chunk = 1;                 // the most tokens one call takes
  bool per_token_positions = false;  // positions [seq] rather than [1]
};

Result<Layout> layout_of(const Method& m) {
  const MethodMeta& meta = m.meta();
  auto tensor = [&](size_t i) -> const TensorMeta* {
    return i < meta.inputs.size() && meta.inputs[i].tensor ? &*meta.inputs[i].tensor : nullptr;
  };
  const TensorMeta* tokens = tensor(0);
  const TensorMeta* positions = tensor(1);
  if (m.num_inputs() != 2 || tokens == nullptr || positions == nullptr ||
      tokens->dtype != ScalarType::kLong || tokens->sizes.size() != 2 || tokens->sizes[0] != 1 ||
      positions->dtype != ScalarType::kLong || positions->sizes.size() != 1 ||
      m.num_outputs() != 1) {
    return invalid_argument(
        "generate: the method must take (tokens int64 [1, seq], positions int64 [1] or [seq]) "
        "and return logits, as ExecuTorch's LLM export flow makes it (with a KV cache)");
  }
  Layout l;
  l.chunk = std::max<int64_t>(1, tokens->sizes[1]);
  l.per_token_positions = positions->sizes[0] > 1;
  if (l.per_token_positions) l.chunk = std::min<int64_t>(l.chunk, positions->sizes[0]);
  return l;
}

// The last row of the logits output, as floats.
Result<std::span<const float>> last_logits(const Method& m, std::vector<float>& converted) {
  ET_ASSIGN_OR_RETURN(const Value* v, m.output(0));
  if (!v->is_tensor()) return invalid_argument("generate: the method's output is not logits");
  const Tensor& t = v->to_tensor();
  if (t.dim() < 1 || t.numel() == 0 || !t.is_contiguous()) {
    return invalid_argument(fmt::format("generate: logits {} are not a contiguous [.., vocab]",
                                        shape_string(t.sizes())));
  }
  const int64_t vocab = t.size(t.dim() - 1);
  const int64_t first = t.numel() - vocab;
  switch (t.dtype()) {
    case ScalarType::kFloat:
      return std::span<const float>(t.data_as<const float>() + first, static_cast<size_t>(vocab));
    case ScalarType::kHalf:
    case ScalarType::kBFloat16:
      converted.resize(static_cast<size_t>(vocab));
      for (int64_t i = 0; i < vocab; ++i) {
        converted[static_cast<size_t>(i)] =
            t.dtype() == ScalarType::kHalf
                ? static_cast<float>(t.data_as<const Half>()[first + i])
                : static_cast<float>(t.data_as<const BFloat16>()[first + i]);
      }
      return std::span<const float>(converted);
    default:
      return invalid_argument(
          fmt::format("generate: logits of dtype {} (float32, float16 or "
                      "bfloat16 expected)",
                      scalar_type_name(t.dtype())));
  }
}

uint64_t since(std::chrono::steady_clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t)
          .count());
}

}  // namespace

int64_t program_max_context(const std::shared_ptr<const Program>& program,
                            const MethodOptions& options, const ExecuteLimits& limits) {
  for (const char* name : {"get_max_context_len", "get_max_seq_len"}) {
    auto m = Method::load(program, name, options);
    if (!m.ok() || (*m)->num_inputs() != 0 || (*m)->num_outputs() != 1) continue;
    if (!(*m)->execute(limits).ok()) continue;
    auto v = (*m)->output(0);
    if (v.ok() && (*v)->is_int() && (*v)->to_int() > 0) return (*v)->to_int();
  }
  return 0;
}

TokenSampler::TokenSampler(float temperature, float top_p, uint64_t seed)
    : temperature_(temperature), top_p_(top_p), rng_(seed) {}

double TokenSampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

int64_t TokenSampler::sample(std::span<const float> logits) {
  if (!(temperature_ > 0)) {
    size_t best = 0;
    for (size_t i = 1; i < logits.size(); ++i) {
      if (logits[i] > logits[best] || (std::isnan(logits[i]) && !std::isnan(logits[best]))) {
        best = i;  // torch.argmax: NaN is the largest
      }
    }
    return static_cast<int64_t>(best);
  }
  const float top = *std::max_element(logits.begin(), logits.end());
  scratch_.clear();
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double p = std::exp((static_cast<double>(logits[i]) - top) / temperature_);
    scratch_.emplace_back(p, static_cast<int64_t>(i));
    total += p;
  }
  size_t keep = scratch_.size();
  if (top_p_ > 0 && top_p_ < 1) {
    // Most likely first (ties by index, so the order is the same everywhere).
    std::sort(scratch_.begin(), scratch_.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    double mass = 0;
    for (keep = 0; keep < scratch_.size();) {
      mass += scratch_[keep++].first;
      if (mass >= top_p_ * total) break;
    }
    total = mass;
  }
  double u = uniform() * total;
  for (size_t i = 0; i < keep; ++i) {
    u -= scratch_[i].first;
    if (u < 0) return scratch_[i].second;
  }
  return scratch_[keep - 1].second;  // rounding left a sliver
}

Result<GenerationStats> generate(Method& method, const GenerationOptions& o,
                                 GenerationBuffers& buffers, const std::function<Status()>& execute,
                                 const std::function<bool(int64_t token)>& on_token) {
  ET_ASSIGN_OR_RETURN(Layout layout, layout_of(method));
  if (o.prompt.empty()) return invalid_argument("generate: the prompt has no tokens");
  if (o.start_pos < 0) return invalid_argument("generate: start_pos is negative");
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature) || !(o.top_p >= 0) || o.top_p > 1) {
    return invalid_argument(fmt::format(
        "generate: temperature {} and top_p {} (a finite temperature >= 0, 0 <= top_p <= 1)",
        o.temperature, o.top_p));
  }
  const int64_t context = o.max_context > 0 ? o.max_context : std::numeric_limits<int64_t>::max();
  if (static_cast<int64_t>(o.prompt.size()) > context - o.start_pos) {
    return invalid_argument(
        fmt::format("generate: a prompt of {} tokens from position {} does not fit a context of {}",
                    o.prompt.size(), o.start_pos, context));
  }
  TokenSampler sampler(o.temperature, o.top_p, o.seed);
  GenerationStats stats;
  std::vector<int64_t>& tokens = buffers.tokens;
  std::vector<int64_t>& positions = buffers.positions;
  // Room for the largest call up front: an unplanned input bound to these buffers is
  // never left pointing at memory a later resize freed.
  tokens.reserve(static_cast<size_t>(layout.chunk));
  positions.reserve(static_cast<size_t>(layout.chunk));
  std::vector<float> converted;
  int64_t pos = o.start_pos;
  // Feeds tokens [begin, end) of `all` at `pos`; returns the last logits.
  auto feed = [&](std::span<const int64_t> all) -> Result<std::span<const float>> {
    const std::array<int64_t, 2> token_sizes{1, static_cast<int64_t>(all.size())};
    tokens.assign(all.begin(), all.end());
    positions.clear();
    if (layout.per_token_positions) {
      for (size_t i = 0; i < all.size(); ++i) positions.push_back(pos + static_cast<int64_t>(i));
    } else {
      positions.push_back(pos);
    }
    const std::array<int64_t, 1> position_sizes{static_cast<int64_t>(positions.size())};
    TensorView tv, pv;
    tv.data = tokens.data();
    tv.nbytes = tokens.size() * sizeof(int64_t);
    tv.dtype = ScalarType::kLong;
    tv.sizes = token_sizes;
    pv.data = positions.data();
    pv.nbytes = positions.size() * sizeof(int64_t);
    pv.dtype = ScalarType::kLong;
    pv.sizes = position_sizes;
    ET_RETURN_IF_ERROR(method.set_input(0, InputValue::of_tensor(tv)).with_context("tokens"));
    ET_RETURN_IF_ERROR(method.set_input(1, InputValue::of_tensor(pv)).with_context("positions"));
    ET_RETURN_IF_ERROR(execute());
    pos += static_cast<int64_t>(all.size());
    return last_logits(method, converted);
  };
  const auto prefill_start = std::chrono::steady_clock::now();
  std::span<const float> logits;
  const std::span<const int64_t> prompt(o.prompt);
  for (size_t done = 0; done < prompt.size();) {
    const size_t n = std::min(prompt.size() - done, static_cast<size_t>(layout.chunk));
    ET_ASSIGN_OR_RETURN(logits, feed(prompt.subspan(done, n)));
    done += n;
  }
  stats.prompt_tokens = static_cast<uint32_t>(prompt.size());
  stats.prefill_ns = since(prefill_start);
  const auto decode_start = std::chrono::steady_clock::now();
  while (true) {
    if (o.temperature > 0) {
      bool finite = false;
      for (float l : logits) {
        if (std::isnan(l) || l == std::numeric_limits<float>::infinity()) {
          return invalid_argument(
              "generate: the method's logits hold NaN or +infinity; sampling needs them finite "
              "(greedy decoding, temperature 0, takes them)");
        }
        finite = finite || std::isfinite(l);
      }
      if (!finite) return invalid_argument("generate: every logit is -infinity; nothing to sample");
    }
    const int64_t token = sampler.sample(logits);
    ++stats.generated;
    const bool stop =
        std::find(o.stop_tokens.begin(), o.stop_tokens.end(), token) != o.stop_tokens.end();
    if (!on_token(token)) {
      stats.stop_reason = "caller";
      break;
    }
    if (stop) {
      stats.stop_reason = "stop_token";
      break;
    }
    if (o.max_new_tokens > 0 && stats.generated >= o.max_new_tokens) {
      stats.stop_reason = "max_new_tokens";
      break;
    }
    if (pos >= context) {
      stats.stop_reason = "context_full";
      break;
    }
    const int64_t next[1] = {token};
    ET_ASSIGN_OR_RETURN(logits, feed(std::span<const int64_t>(next, 1)));
  }
  stats.decode_ns = since(decode_start);
  stats.next_pos = pos;
  return stats;
}

}  // namespace et
