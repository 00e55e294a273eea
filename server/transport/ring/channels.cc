#include "server/transport/ring/channels.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "server/transport/ring/ring_calls.h"

namespace et::server {

Status open_fast_channel(Core& core, const FastPathOptions& options, EtProtocol protocol,
                         const std::string& token, int memfd, int link,
                         std::weak_ptr<FastChannel>& channel) {
  auto found = options.enabled ? core.session(token)
                               : Result<std::shared_ptr<Session>>(not_supported(
                                     "fast path: this daemon runs with --no-fast-path; use gRPC"));
  if (!found.ok()) {
    close(memfd);
    close(link);
    return found.status();
  }
  std::shared_ptr<Session> s = *found;
  const uint64_t limit = core.limits().max_segment_bytes_per_session;
  const uint64_t mapped = std::min<uint64_t>(limit, *s->mapped_bytes);
  auto memory = Segment::adopt(memfd, std::min<uint64_t>(FastChannel::kMostBytes, limit - mapped));
  if (!memory.ok()) {
    close(link);
    return memory.status().with_context("fast path");
  }
  bool link_taken = false;
  Status attached = core.attach(
      *s,
      [&](Session& session, size_t in_session, size_t in_all,
          std::function<void()> on_finished) -> Result<std::shared_ptr<SessionAttachment>> {
        link_taken = true;
        if (in_session >= options.max_channels_per_session || in_all >= options.max_channels) {
          close(link);
          return resource_exhausted(fmt::format(
              "fast path: {} channels open in this session and {} in all, the limits "
              "(--max-fast-channels-per-session, --max-fast-channels); the client uses gRPC "
              "instead",
              in_session, in_all));
        }
        (*memory)->charge_to(session.mapped_bytes);
        ET_ASSIGN_OR_RETURN(
            std::shared_ptr<FastChannel> started,
            FastChannel::start(std::move(memory).value(), link,
                               ring_call_handler(std::move(protocol), token), options.timing,
                               [on_finished = std::move(on_finished), number = session.number] {
                                 on_finished();
                                 spdlog::debug("session {}: a fast-path channel closed", number);
                               }));
        channel = started;
        return std::shared_ptr<SessionAttachment>(std::move(started));
      });
  if (!link_taken) close(link);
  return attached;
}

}  // namespace et::server
