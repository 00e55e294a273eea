// A session's fast-path channels (docs/fast_path.md): their opening within the limits,
// and forgetting those whose threads have ended. What a channel answers is the
// transport's (server/transport/ring/); the core keeps them only to end them with the
// session.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "server/core/core.h"

namespace et::server {

Status Core::open_fast_channel(const std::string& token, int memfd, int link,
                               FastChannel::Handler handler, std::weak_ptr<FastChannel>& channel) {
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
  auto memory = Segment::adopt(memfd, std::min<uint64_t>(FastChannel::kMostBytes, limit - mapped));
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
  auto started =
      FastChannel::start(std::move(memory).value(), link, std::move(handler),
                         limits_.fast_path_timing, [this, number = s->number] {
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

void Core::reap_fast_channels() {
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

}  // namespace et::server
