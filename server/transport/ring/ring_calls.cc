#include "server/transport/ring/ring_calls.h"

#include <fmt/format.h>

#include "runtime/core/exceptions.h"
#include "server/metrics/call_scope.h"
#include "server/transport/rpc_code.h"

namespace et::server {
namespace {

using et::wire::FastCall;

// Parses `request` as Req, names it as the channel's session, runs `call`, and answers
// with the response (OK) or the status as gRPC would give it.
template <typename Req, typename Resp, typename Call>
uint32_t answer(const std::string& token, std::span<const uint8_t> request, std::string& reply,
                Call&& call) {
  // One set of messages per channel thread, reused: no allocation once warm.
  thread_local Req req;
  thread_local Resp resp;
  req.Clear();
  resp.Clear();
  if (!req.ParseFromArray(request.data(), static_cast<int>(request.size()))) {
    reply = fmt::format("fast path: the request is not a valid {} (docs/fast_path.md)",
                        Req::descriptor()->name());
    return rpc_code(invalid_argument(""));
  }
  req.set_session(token);
  const Status status = catch_exceptions("", [&] { return call(req, resp); });
  if (!status.ok()) {
    reply = status.message();
    return rpc_code(status);
  }
  resp.SerializeToString(&reply);
  return 0;
}

uint32_t answer_call(EtProtocol& p, const std::string& token, FastCall kind,
                     std::span<const uint8_t> request, std::string& reply,
                     const CallBounds& bounds) {
  switch (kind) {
    case FastCall::kRun:
      return answer<pb::RunRequest, pb::RunResponse>(
          token, request, reply, [&](auto& q, auto& r) { return p.run(q, r, bounds); });
    case FastCall::kSetInputs:
      return answer<pb::SetInputsRequest, pb::SetInputsResponse>(
          token, request, reply, [&](auto& q, auto&) { return p.set_inputs(q, bounds); });
    case FastCall::kExecute:
      return answer<pb::ExecuteRequest, pb::ExecuteResponse>(
          token, request, reply, [&](auto& q, auto& r) { return p.execute(q, r, bounds); });
    case FastCall::kGetOutputs:
      return answer<pb::GetOutputsRequest, pb::GetOutputsResponse>(
          token, request, reply, [&](auto& q, auto& r) { return p.get_outputs(q, r, bounds); });
  }
  reply = "fast path: unknown request kind";
  return rpc_code(invalid_argument(""));
}

}  // namespace

FastChannel::Handler ring_call_handler(EtProtocol protocol, std::string token) {
  return
      [protocol, token = std::move(token)](FastCall kind, std::span<const uint8_t> request,
                                           std::string& reply, const CallBounds& bounds) mutable {
        metrics::CallScope scope(&protocol.core().metrics(), metrics::Transport::kFastPath);
        const uint32_t code = answer_call(protocol, token, kind, request, reply, bounds);
        scope.set_code(static_cast<int>(code));
        return code;
      };
}

}  // namespace et::server
