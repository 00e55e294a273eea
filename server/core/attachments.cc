// What transports attach to sessions (fast-path channels): attaching under the
// session's lock, counting them while their threads run, forgetting finished ones.
#include "server/core/core.h"

namespace et::server {

Status Core::attach(Session& s, const AttachmentOpener& open) {
  reap_attachments();
  MutexLock lock(s.mu);
  if (s.closed) return unauthenticated("session: closed while attaching to it");
  ++attachments_;  // counted while its thread serves: it ends on that thread
  auto opened = open(s, s.attachments.size(), attachments_ - 1, [this] { --attachments_; });
  if (!opened.ok()) {
    --attachments_;
    return opened.status();
  }
  s.attachments.push_back(std::move(opened).value());
  return Status();
}

void Core::reap_attachments() {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    MutexLock lock(mu_);
    for (const auto& [token, s] : sessions_) sessions.push_back(s);
  }
  std::vector<std::shared_ptr<SessionAttachment>> finished;  // joined outside the locks
  for (const auto& s : sessions) {
    MutexLock lock(s->mu);
    auto& open = s->attachments;
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
