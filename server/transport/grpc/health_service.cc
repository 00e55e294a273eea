#include "server/transport/grpc/health_service.h"

#include <utility>
#include <vector>

namespace et::server {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// One Watch stream. What it does next (a write, or the end of the stream) is decided
// under the service's mutex and claimed there (writing_, finishing_), then started
// outside it: gRPC may run a reaction, OnDone included, on the thread that starts it.
// Nothing else touches a watcher between a claimed Finish and its OnDone.
class HealthService::Watcher final : public grpc::ServerWriteReactor<HealthCheckResponse> {
 public:
  enum class Step { kNone, kWrite, kFinish };

  Watcher(HealthService& service, bool known) : service_(service), known_(known) {}

  // What to do next, given the service's state. REQUIRES: the service's mutex held
  // (passing its state in lets the analysis check the callers: it cannot tell that a
  // watcher's service_ is the service at hand).
  Step next_locked(Status status, bool stopping) {
    if (writing_ || finishing_) return Step::kNone;
    if (cancelled_) {
      finishing_ = true;
      end_ = grpc::Status::CANCELLED;
      return Step::kFinish;
    }
    const Status want = known_ ? status : HealthCheckResponse::SERVICE_UNKNOWN;
    if (!sent_any_ || want != sent_) {
      out_.set_status(want);
      writing_ = true;
      return Step::kWrite;
    }
    if (stopping) {
      finishing_ = true;
      end_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "et-serverd is stopping");
      return Step::kFinish;
    }
    return Step::kNone;
  }

  // REQUIRES: mu_ not held; `step` claimed by next_locked().
  void run(Step step) {
    if (step == Step::kWrite) StartWrite(&out_);
    if (step == Step::kFinish) Finish(end_);
  }

  void OnWriteDone(bool ok) override {
    Step step;
    {
      MutexLock lock(service_.mu_);
      writing_ = false;
      if (ok) {
        sent_any_ = true;
        sent_ = out_.status();
      } else {
        cancelled_ = true;  // the client or the server went away
      }
      step = next_locked(service_.status_, service_.stopping_);
    }
    run(step);
  }

  void OnCancel() override {
    Step step;
    {
      MutexLock lock(service_.mu_);
      cancelled_ = true;
      step = next_locked(service_.status_, service_.stopping_);
    }
    run(step);
  }

  void OnDone() override {
    {
      // Notified under the mutex: once wait_for_watchers() sees none it may return, and the
      // service may be gone.
      MutexLock lock(service_.mu_);
      service_.watchers_.erase(this);
      service_.watchers_ended_.notify_all();
    }
    delete this;
  }

 private:
  HealthService& service_;
  const bool known_;  // the overall service (""); any other name is unknown
  HealthCheckResponse out_;
  grpc::Status end_;
  Status sent_ = HealthCheckResponse::UNKNOWN;  // the last status the client was sent
  bool sent_any_ = false;
  bool writing_ = false;
  bool finishing_ = false;
  bool cancelled_ = false;
};

void HealthService::set_serving(bool serving) {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    status_ = serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  }
  update_watchers();
}

void HealthService::stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    status_ = HealthCheckResponse::NOT_SERVING;
  }
  update_watchers();
}

bool HealthService::wait_for_watchers(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mu_);
  return lock.wait_until(watchers_ended_, deadline,
                         [this]() ET_REQUIRES(mu_) { return watchers_.empty(); });
}

size_t HealthService::watchers() const {
  MutexLock lock(mu_);
  return watchers_.size();
}

void HealthService::update_watchers() {
  std::vector<std::pair<Watcher*, Watcher::Step>> steps;
  {
    MutexLock lock(mu_);
    for (Watcher* w : watchers_) {
      if (auto step = w->next_locked(status_, stopping_); step != Watcher::Step::kNone)
        steps.emplace_back(w, step);
    }
  }
  for (auto& [w, step] : steps) w->run(step);
}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const HealthCheckRequest* request,
                                               HealthCheckResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!request->service().empty()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                 "et-serverd reports health for the service \"\" only"));
    return reactor;
  }
  {
    MutexLock lock(mu_);
    response->set_status(status_);
  }
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerWriteReactor<HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext*, const HealthCheckRequest* request) {
  auto* watcher = new Watcher(*this, request->service().empty());
  Watcher::Step step;
  {
    MutexLock lock(mu_);
    watchers_.insert(watcher);
    step = watcher->next_locked(status_, stopping_);
  }
  watcher->run(step);
  return watcher;
}

}  // namespace et::server
