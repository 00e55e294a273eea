#include "server/repository/watcher.h"

#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>

#include "runtime/core/printable.h"

namespace et::server::repository {
namespace {

constexpr uint32_t kDirEvents = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO |
                                IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF |
                                IN_ATTRIB;

}  // namespace

Result<std::unique_ptr<DirectoryWatcher>> DirectoryWatcher::start(const std::string& dir,
                                                                  std::chrono::milliseconds settle,
                                                                  std::chrono::milliseconds rescan,
                                                                  Changed changed) {
  auto w = std::unique_ptr<DirectoryWatcher>(new DirectoryWatcher());
  w->dir_ = dir;
  w->settle_ = settle;
  w->rescan_ = rescan;
  w->changed_ = std::move(changed);
  w->inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  w->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (w->inotify_fd_ < 0 || w->stop_fd_ < 0) {
    return io_error(fmt::format("--model-control-mode poll: inotify: {}", std::strerror(errno)));
  }
  const int wd = inotify_add_watch(w->inotify_fd_, dir.c_str(), kDirEvents);
  if (wd < 0) {
    return io_error(fmt::format("--model-control-mode poll: cannot watch {}: {}{}", printable(dir),
                                std::strerror(errno),
                                errno == ENOSPC ? " (raise fs.inotify.max_user_watches)" : ""));
  }
  w->watched_[wd] = dir;
  w->watch_tree();
  w->thread_ = std::thread([p = w.get()] { p->run(); });
  return w;
}

DirectoryWatcher::~DirectoryWatcher() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

void DirectoryWatcher::watch_tree() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& model : fs::directory_iterator(dir_, ec)) {
    std::error_code kind_ec;
    if (!model.is_directory(kind_ec)) continue;
    const int wd = inotify_add_watch(inotify_fd_, model.path().c_str(), kDirEvents);
    if (wd >= 0) watched_[wd] = model.path().string();
    std::error_code inner_ec;
    for (const auto& version : fs::directory_iterator(model.path(), inner_ec)) {
      if (!version.is_directory(kind_ec)) continue;
      const int vwd = inotify_add_watch(inotify_fd_, version.path().c_str(), kDirEvents);
      if (vwd >= 0) watched_[vwd] = version.path().string();
    }
  }
}

void DirectoryWatcher::run() {
  using Clock = std::chrono::steady_clock;
  std::set<std::string> being_written;
  bool dirty = false;
  bool new_directory = false;
  Clock::time_point quiet_at{}, rescan_at = Clock::now() + rescan_;
  alignas(inotify_event) char buffer[16 * 1024];
  while (true) {
    const auto now = Clock::now();
    Clock::time_point wake = Clock::time_point::max();
    if (dirty) wake = quiet_at;
    if (rescan_.count() > 0) wake = std::min(wake, rescan_at);
    int timeout = -1;
    if (wake != Clock::time_point::max()) {
      timeout = static_cast<int>(std::clamp<int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1, 0,
          INT32_MAX));
    }
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, timeout) < 0 && errno != EINTR) {
      spdlog::error("model repository watcher: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    if (fds[0].revents & POLLIN) {
      ssize_t n;
      while ((n = read(inotify_fd_, buffer, sizeof buffer)) > 0) {
        for (char* p = buffer; p < buffer + n;) {
          const auto* e = reinterpret_cast<const inotify_event*>(p);
          p += sizeof(inotify_event) + e->len;
          if (e->mask & IN_Q_OVERFLOW) {
            // Events were lost: nothing is known to be open any more; read it all again.
            being_written.clear();
            continue;
          }
          if (e->mask & IN_IGNORED) {
            watched_.erase(e->wd);
            continue;
          }
          if ((e->mask & IN_ISDIR) && (e->mask & (IN_CREATE | IN_MOVED_TO))) {
            // A new model or version directory: watched at once, so that the writes
            // into it that follow are seen (not only after the burst settles).
            new_directory = true;
          }
          auto dir = watched_.find(e->wd);
          if (dir == watched_.end() || e->len == 0) continue;
          const std::string path = dir->second + "/" + e->name;
          if ((e->mask & IN_MODIFY) && !(e->mask & IN_ISDIR)) {
            being_written.insert(path);
          } else if (e->mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)) {
            being_written.erase(path);
          }
        }
      }
      if (std::exchange(new_directory, false)) watch_tree();
      dirty = true;
      quiet_at = Clock::now() + settle_;
    }
    const auto after = Clock::now();
    const bool rescan_due = rescan_.count() > 0 && after >= rescan_at;
    if ((dirty && after >= quiet_at) || rescan_due) {
      watch_tree();  // new model or version directories
      changed_(being_written);
      dirty = false;
      if (rescan_.count() > 0) rescan_at = Clock::now() + rescan_;
    }
  }
}

}  // namespace et::server::repository
