// ServiceCore's fast path (docs/fast_path.md): opening channels, and answering their
// requests with the very calls gRPC makes, so both transports check and fail alike.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "runtime/exceptions.h"
#include "server/grpc_service.h"
#include "server/metrics/call_scope.h"
#include "server/service_core.h"

namespace et::server {

using etserver::FastCall;

Status ServiceCore::open_fast_channel(const std::string& token, int memfd, int link,
                                      std::weak_ptr<FastChannel>& channel) {
  auto found = limits_.fast_path
                   ? session_for(token)
                   : Result<std::shared_ptr<Session>>(not_supported(
                         "fast path: this daemon runs with --no-fast-path; use gRPC"));
  if (!found.ok()) {
    close(memfd);
    close(link);
    return found.status();
  }
  std::shared_ptr<Session> s = *found;
  const uint64_t limit = limits_.max_segment_bytes_per_session;
  const uint64_t mapped = std::min<uint64_t>(limit, *s->mapped_bytes);
  auto memory =
      Segment::adopt(memfd, std::min<uint64_t>(etserver::kChannelMaxBytes, limit - mapped));
  if (!memory.ok()) {
    close(link);
    return memory.status().with_context("fast path");
  }
  reap_fast_channels();
  MutexLock lock(s->mu);
  if (s->closed) {
    close(link);
    return unauthenticated("session: closed while opening a fast-path channel");
  }
  auto& open = s->channels;
  if (open.size() >= limits_.max_fast_channels_per_session ||
      fast_channels_ >= limits_.max_fast_channels) {
    close(link);
    return resource_exhausted(fmt::format(
        "fast path: {} channels open in this session and {} in all, the limits "
        "(--max-fast-channels-per-session, --max-fast-channels); the client uses gRPC instead",
        open.size(), fast_channels_.load()));
  }
  (*memory)->charge_to(s->mapped_bytes);
  ++fast_channels_;  // counts a channel while its thread serves: it ends on that thread
  auto started = FastChannel::start(
      std::move(memory).value(), link,
      [this, token](FastCall kind, std::span<const uint8_t> request, std::string& reply) {
        return fast_call(token, kind, request, reply);
      },
      limits_.fast_path_timing,
      [this, number = s->number] {
        --fast_channels_;
        spdlog::debug("session {}: a fast-path channel closed", number);
      });
  if (!started.ok()) {
    --fast_channels_;
    return started.status();
  }
  channel = *started;
  open.push_back(std::move(started).value());
  return Status();
}

void ServiceCore::reap_fast_channels() {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    MutexLock lock(mu_);
    for (const auto& [token, s] : sessions_) sessions.push_back(s);
  }
  std::vector<std::shared_ptr<FastChannel>> finished;  // joined outside the locks
  for (const auto& s : sessions) {
    MutexLock lock(s->mu);
    auto& open = s->channels;
    for (auto it = open.begin(); it != open.end();) {
      if ((*it)->finished()) {
        finished.push_back(std::move(*it));
        it = open.erase(it);
      } else {
        ++it;
      }
    }
  }
}

namespace {

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
    return static_cast<uint32_t>(grpc::StatusCode::INVALID_ARGUMENT);
  }
  req.set_session(token);
  Status status = catch_exceptions("", [&] { return call(req, resp); });
  const grpc::Status answer = to_grpc(status);
  if (!answer.ok()) {
    reply = answer.error_message();
    return static_cast<uint32_t>(answer.error_code());
  }
  resp.SerializeToString(&reply);
  return 0;
}

}  // namespace

uint32_t ServiceCore::fast_call(const std::string& token, FastCall kind,
                                std::span<const uint8_t> request, std::string& reply) {
  metrics::CallScope scope(&metrics_, metrics::Transport::kFastPath);
  const uint32_t code = fast_call_uncounted(token, kind, request, reply);
  scope.set_code(static_cast<int>(code));
  return code;
}

uint32_t ServiceCore::fast_call_uncounted(const std::string& token, FastCall kind,
                                          std::span<const uint8_t> request, std::string& reply) {
  switch (kind) {
    case FastCall::kRun:
      return answer<pb::RunRequest, pb::RunResponse>(
          token, request, reply, [this](auto& q, auto& r) { return run(q, r); });
    case FastCall::kSetInputs:
      return answer<pb::SetInputsRequest, pb::SetInputsResponse>(
          token, request, reply, [this](auto& q, auto&) { return set_inputs(q); });
    case FastCall::kExecute:
      return answer<pb::ExecuteRequest, pb::ExecuteResponse>(
          token, request, reply, [this](auto& q, auto& r) { return execute(q, r); });
    case FastCall::kGetOutputs:
      return answer<pb::GetOutputsRequest, pb::GetOutputsResponse>(
          token, request, reply, [this](auto& q, auto& r) { return get_outputs(q, r); });
  }
  reply = "fast path: unknown request kind";
  return static_cast<uint32_t>(grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace et::server
