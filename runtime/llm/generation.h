// Token generation with a decoder LLM method, as ExecuTorch's LLM export flow makes
// them: forward(tokens int64 [1, seq], positions int64 [1] (the first token's) or [seq])
// -> logits [1, vocab] (the last token's) or [1, seq, vocab]. The KV cache lives in the
// method's mutable buffers, so one Method instance is one conversation.
//
// generate() prefills the prompt (in chunks of the most tokens the method takes at
// once), then decodes: each step feeds the token just chosen at the next position. A
// token is chosen from the last logits by a TokenSampler. It stops at a stop token (which
// is reported, not fed), after max_new_tokens, when the context is full, or when the
// caller's callback says so.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/method.h"

namespace et {

// Chooses a token from logits. temperature <= 0: the highest logit (the first of
// equals, as torch.argmax). Otherwise a draw from softmax(logits / temperature),
// restricted to the smallest set of most likely tokens whose probability reaches top_p
// when 0 < top_p < 1. Draws come from a 64-bit Mersenne Twister seeded with `seed`:
// the same seed gives the same tokens on every machine.
class TokenSampler {
 public:
  TokenSampler(float temperature, float top_p, uint64_t seed);
  int64_t sample(std::span<const float> logits);

 private:
  double uniform();  // [0, 1), 53 bits
  float temperature_, top_p_;
  std::mt19937_64 rng_;
  std::vector<std::pair<double, int64_t>> scratch_;
};

struct GenerationOptions {
  std::vector<int64_t> prompt;       // at least one token
  int64_t start_pos = 0;             // the first prompt token's position
  uint32_t max_new_tokens = 0;       // 0: until a stop token or the context is full
  std::vector<int64_t> stop_tokens;  // e.g. the tokenizer's end-of-sequence ids
  float temperature = 0;
  float top_p = 1;
  uint64_t seed = 0;
  int64_t max_context = 0;  // positions the cache holds; 0: the method's own bound
};

struct GenerationStats {
  uint32_t prompt_tokens = 0, generated = 0;
  uint64_t prefill_ns = 0, decode_ns = 0;  // the decode steps after the first token
  int64_t next_pos = 0;                    // where a follow-up prompt continues
  std::string stop_reason;  // "stop_token", "max_new_tokens", "context_full", "caller"
};

// The context an export-flow program's LLM methods hold: what its constant method
// get_max_context_len (else get_max_seq_len) returns, loaded with `options` and run
// within `limits`; 0 when it has neither, or they fail or give no positive int.
int64_t program_max_context(const std::shared_ptr<const Program>& program,
                            const MethodOptions& options = {}, const ExecuteLimits& limits = {});

// Where the token and position inputs live while bound: an unplanned input stays
// pointed at them after generate() returns, so they must live as long as the method
// (or until its inputs are bound again).
struct GenerationBuffers {
  std::vector<int64_t> tokens, positions;
};

// Runs the generation on `method`. `execute` runs the method once (the caller adds its
// deadlines and cancellation); `on_token(token)` receives each chosen token as it comes
// and returns false to stop. Errors: InvalidArgument naming what does not fit (a
// method of another shape, an empty prompt, a prompt past the context); the method's
// and execute's own errors.
Result<GenerationStats> generate(Method& method, const GenerationOptions& options,
                                 GenerationBuffers& buffers, const std::function<Status()>& execute,
                                 const std::function<bool(int64_t token)>& on_token);

}  // namespace et
