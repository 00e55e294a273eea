// A call as it enters the core (Core::call): which method instance it is for, and what
// it does while it holds that instance and a worker. Every transport builds one: the et
// protocol's Run, SetInputs, Execute, GetOutputs, GetAttribute, StartProfile and
// Generate (over gRPC and the fast path alike) and KServe's inference (gRPC and HTTP).
// Nothing here names a wire format: transports decode inputs into DecodedInputs and
// read outputs from the runtime's Method through the callbacks they give.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/llm/generation.h"
#include "server/core/decoded_input.h"

namespace et::server {

struct MethodSlot;

// A method instance of a session, named as its client names it.
struct SessionMethod {
  std::string_view token;  // the session; must outlive the call
  uint64_t handle = 0;
};

// An instance no session holds (a KServe model's): the caller keeps it alive for the
// call and gives the flag that stops its executes. Calls on it are not counted against
// any session's --max-calls, and it has no segments.
struct HeldInstance {
  MethodSlot* slot = nullptr;
  const std::atomic<bool>* cancelled = nullptr;
};

// Decodes the call's inputs for `method` into `out` (one per method input). `segments`
// finds the session's segments (empty for a HeldInstance).
using InputDecoder = std::function<Status(const Method& method, const SegmentLookup& segments,
                                          std::vector<DecodedInput>& out)>;
// Reads the method's outputs into the transport's reply.
using OutputReader = std::function<Status(const Method& method, const SegmentLookup& segments)>;

// Binds inputs, executes, reads outputs: any of the three, in that order (SetInputs only
// binds, Execute only executes, GetOutputs only reads; Run does all three). State stays
// in the instance between calls: inputs bound by one call are executed by the next.
struct RunWork {
  InputDecoder bind;  // empty: the inputs bound before stay
  bool execute = true;
  OutputReader read;              // empty: the outputs are left for a later call
  std::string_view bind_context;  // names the step in set_inputs' errors ("inputs")
};

// Holds the instance without executing it (a method's attributes, starting a profile):
// `body` runs with the instance to itself.
struct HoldWork {
  std::function<Status(MethodSlot& slot, const SegmentLookup& segments)> body;
};

// Prefill and decode (runtime/llm/generation.h). `write` sends the tokens chosen since its
// last call, from a thread of its own, and returns false when the caller went away
// (which stops the generation); a caller that leaves 4096 tokens unread for the request
// deadline is ResourceExhausted. With options.max_context 0 the program's own bound is
// used; with none known and no max_new_tokens, at most kDefaultMostNewTokens come.
struct GenerateWork {
  static constexpr uint32_t kDefaultMostNewTokens = 4096;
  static constexpr size_t kMostTokens = size_t{1} << 20;  // prompt, and max_new_tokens
  GenerationOptions options;
  std::function<bool(std::span<const int64_t> tokens)> write;
  GenerationStats stats;  // out: set when the call succeeds
};

// How long one call spent in each step, in nanoseconds.
struct CallTimes {
  uint64_t queued_ns = 0;  // waiting for the instance and a worker
  uint64_t input_ns = 0;   // decoding and binding the inputs
  uint64_t infer_ns = 0;   // executing
  uint64_t output_ns = 0;  // reading the outputs
};

// What the caller bounds its call by, besides the daemon's limits: its deadline (gRPC's,
// KServe's timeout parameter) and a way to ask whether it went away (a gRPC client that
// cancelled). A call whose deadline passes while it waits for its method or a worker
// never runs (DeadlineExceeded); a running one stops at the next check between
// instructions, and the instance stays usable.
struct CallBounds {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool (*caller_gone)(const void* arg) = nullptr;  // cheap and thread-safe; null: never
  const void* caller_gone_arg = nullptr;

  bool gone() const { return caller_gone != nullptr && caller_gone(caller_gone_arg); }
};

struct CallRequest {
  using Target = std::variant<SessionMethod, HeldInstance>;
  using Work = std::variant<RunWork, HoldWork, GenerateWork>;
  CallRequest(Target t, Work w, CallBounds b = {}) : target(t), work(std::move(w)), bounds(b) {}

  Target target;
  Work work;
  CallBounds bounds;
  CallTimes times;  // out: the steps reached, also when the call fails
};

}  // namespace et::server
