// The daemon's model repository (--models DIR; docs/operations.md): which program
// serves each model, at which version, kept in step with the directory (layout.h) as
// --model-control-mode says:
// - none: everything is loaded at start; load and unload requests are refused;
// - poll: everything is loaded at start, then changes are followed (inotify): a new
//   file is a new model or version, a rewritten one a new version, a removed one is no
//   longer served; load and unload requests are refused (the directory decides);
// - explicit: the --load-model names at start ("*": all), then load and unload
//   requests.
// One version of each model is served: the newest that loads. A file still open for
// writing is not read until its writer closes it; a file that does not load is
// reported (log, index()) and skipped, and the version served before stays. Sessions
// and calls holding a program keep it, whatever happens here.
//
// Versions: Triton's layout numbers them by directory. In the flat layout a model
// starts at version 1 and each new content of its file is the next version.
//
// Each served program is also the daemon's preloaded program (SharedPrograms) named
// after its file in the flat layout ("add.pte") and after its model in Triton's
// ("resnet"), so that sessions of the daemon's own protocol load it by that name.
//
// Thread-safety: every method may be called from any thread; loads run one at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "port/mutex.h"
#include "server/core/shared_programs.h"
#include "server/repository/layout.h"
#include "server/repository/watcher.h"

namespace et::server::repository {

enum class ModelControl { kNone, kPoll, kExplicit };
// "none", "poll" or "explicit"; InvalidArgument otherwise.
Result<ModelControl> parse_model_control(std::string_view text);
std::string_view model_control_name(ModelControl control);

struct RepositoryOptions {
  std::string dir;
  ModelControl control = ModelControl::kNone;
  std::vector<std::string> load_at_start;  // explicit: --load-model NAME ("*": all)
  // poll: how long the directory stays quiet after a change before it is read again,
  // and how often it is read regardless (0: only on changes).
  std::chrono::milliseconds settle{250};
  std::chrono::milliseconds rescan{30'000};
  // Called with each program loaded, before it is served (at start: before the daemon
  // is ready); the daemon's warm-up (Core::warm_up). Empty: none.
  std::function<void(const std::string& model, const SharedProgram& program)> warm_up = nullptr;
};

struct ModelState {
  std::string model;
  uint64_t version = 0;  // 0: none (a model not loaded)
  bool ready = false;    // the version served; else a version that did not load, or none
  std::string reason;    // why not ready
};

class ModelRepository {
 public:
  // Told of every change of what a model serves, in order, one at a time: the version
  // and program now served, or null when the model is no longer served.
  using Observer = std::function<void(const std::string& model, uint64_t version,
                                      const std::shared_ptr<const SharedProgram>& program)>;

  // Reads nothing yet: start() does. From now until start() has loaded, the registry's
  // preloaded-name lookups wait (the daemon listens meanwhile). IoError when `o.dir`
  // is not a readable directory.
  static Result<std::unique_ptr<ModelRepository>> open(SharedPrograms& registry,
                                                       RepositoryOptions o);
  ~ModelRepository();  // stops following the directory
  // Stops following the directory (poll mode): no observer is told anything after this
  // returns.
  void stop_following() { watcher_.reset(); }

  // REQUIRES: before start().
  void observe(Observer observer) { observers_.push_back(std::move(observer)); }

  // Loads what the mode loads at start, then in poll mode follows the directory. A
  // file rewritten with the same bytes keeps its program and version; a served
  // version's file rewritten with one that does not load stays served. Errors only when
  // poll mode cannot watch the directory; each model's failure is logged and indexed.
  Status start();

  // explicit mode: (re)loads model `name` from the directory (a model already served
  // from unchanged files is served anew: observers start it afresh). NotFound when the
  // directory has no such model; the newest version's load error when it did not load
  // (an older version that did is served meanwhile). FailedPrecondition in other modes.
  Status load(const std::string& name);
  // explicit mode: stops serving `name`. NotFound when not served.
  Status unload(const std::string& name);

  // The models served, the versions that did not load, and the directory's models
  // not loaded, by model then version.
  std::vector<ModelState> index() const;
  // The version and program `model` serves (null when none).
  std::shared_ptr<const SharedProgram> served(const std::string& model,
                                              uint64_t* version = nullptr) const;
  size_t served_count() const;

  ModelControl control() const { return o_.control; }
  const std::string& dir() const { return o_.dir; }
  // Loads that succeeded and failed since the start (metrics).
  uint64_t loads() const { return loads_.load(std::memory_order_relaxed); }
  uint64_t load_failures() const { return load_failures_.load(std::memory_order_relaxed); }

  // Reads the whole directory again and applies what changed (what poll mode does on
  // each change), not reading `being_written`.
  void refresh(const std::set<std::string>& being_written = {});

 private:
  ModelRepository(SharedPrograms& registry, RepositoryOptions o)
      : registry_(registry), o_(std::move(o)) {}

  struct Served {
    uint64_t version = 0;
    std::string path;
    FileStamp stamp, data_stamp;
    std::string registry_name;
    std::shared_ptr<const SharedProgram> program;
  };
  struct Failure {
    uint64_t version = 0;
    std::string path;
    FileStamp stamp, data_stamp;
    Status status;
  };

  // Brings `model` in step with `files` (its files, newest first). `renew`: tell the
  // observers even when nothing changed. Returns the newest version's load error.
  // REQUIRES: load_mu_ held.
  Status reconcile(const std::string& model, const std::vector<ProgramFile>& files,
                   const std::set<std::string>& being_written, bool renew);
  // Reads and loads `f`; ok when it is now served.
  Status load_file(const std::string& model, const ProgramFile& f, const FileStamp& stamp,
                   const FileStamp& data_stamp, bool renew);
  void stop_serving(const std::string& model, const std::string& why);  // REQUIRES: load_mu_
  void tell(const std::string& model, uint64_t version,
            const std::shared_ptr<const SharedProgram>& program);

  SharedPrograms& registry_;
  const RepositoryOptions o_;
  std::vector<Observer> observers_;
  std::unique_ptr<DirectoryWatcher> watcher_;

  Mutex load_mu_;  // one load or refresh at a time
  std::set<std::string> problems_logged_ ET_GUARDED_BY(load_mu_);

  mutable Mutex mu_;
  std::map<std::string, Served> served_ ET_GUARDED_BY(mu_);
  std::map<std::string, std::vector<Failure>> failed_ ET_GUARDED_BY(mu_);  // newest first

  std::atomic<uint64_t> loads_{0}, load_failures_{0};
};

}  // namespace et::server::repository
