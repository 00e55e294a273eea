// Follows a model repository directory with inotify (the `poll` control mode): calls
// back once the tree has been quiet for a moment after a change, and now and then
// regardless, with the files still open for writing so that those are not read yet.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "runtime/core/status.h"

namespace et::server::repository {

class DirectoryWatcher {
 public:
  // Paths written to (IN_MODIFY) and not closed since (IN_CLOSE_WRITE): a writer is
  // still at work on them.
  using Changed = std::function<void(const std::set<std::string>& being_written)>;

  // Watches `dir`, its subdirectories and theirs (Triton's NAME/VERSION/), and calls
  // `changed` on a thread of its own: `settle` after the last event of a burst, and
  // every `rescan` (0: never) in case an event was lost. IoError when inotify cannot
  // watch `dir`.
  static Result<std::unique_ptr<DirectoryWatcher>> start(const std::string& dir,
                                                         std::chrono::milliseconds settle,
                                                         std::chrono::milliseconds rescan,
                                                         Changed changed);
  // Stops the thread (waits for a callback under way).
  ~DirectoryWatcher();
  DirectoryWatcher(const DirectoryWatcher&) = delete;
  DirectoryWatcher& operator=(const DirectoryWatcher&) = delete;

 private:
  DirectoryWatcher() = default;
  void run();
  void watch_tree();  // adds watches for the directories now present (idempotent)

  std::string dir_;
  std::chrono::milliseconds settle_{0}, rescan_{0};
  Changed changed_;
  int inotify_fd_ = -1;
  int stop_fd_ = -1;                    // an eventfd: the destructor's signal
  std::map<int, std::string> watched_;  // watch descriptor -> directory (the thread's own)
  std::thread thread_;
};

}  // namespace et::server::repository
