#include "autostart.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "proto/socket_trust.h"
#include "proto/spawn_lock.h"

extern char** environ;

namespace etclient {
namespace {

bool is_executable(const std::string& path) {
  struct stat st {};
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

// The last `lines` lines of the file at `path`, for an error message.
std::string tail_of(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> kept;
  for (std::string line; std::getline(in, line);) {
    kept.push_back(line);
    if (kept.size() > lines) kept.erase(kept.begin());
  }
  std::string out;
  for (const std::string& line : kept) out += "\n  " + line;
  return out;
}

Status unavailable(const std::string& message) { return Status(StatusCode::kUnavailable, message); }

// Starts `binary --detach` and waits for the command to return (it does once the daemon
// listens, or failed). The daemon's output goes to `log`.
Status start_detached(const std::string& binary, const SpawnRequest& request,
                      const std::string& log) {
  const std::string idle = std::to_string(request.idle_exit.count());
  std::vector<std::string> args = {binary, "--socket", request.socket, "--idle-exit",
                                   idle,   "--detach", "--log-level",  "info"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  // Nothing else of the caller's: a pipe the daemon kept open would keep whoever reads
  // its other end (a test runner capturing output) waiting for it to close.
  posix_spawn_file_actions_addclosefrom_np(&files, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, binary.c_str(), &files, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (err != 0) return unavailable("cannot start " + binary + ": " + std::strerror(err));
  const auto deadline = std::chrono::steady_clock::now() + request.timeout;
  while (true) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status();
      return unavailable("et-serverd (" + binary + ") did not start on " + request.socket +
                         "; the end of its log " + log + ":" + tail_of(log, 8));
    }
    // ECHILD: the caller reaps children itself (SIGCHLD ignored): watch the socket.
    if (done < 0 && errno == ECHILD && daemon_listens(request.socket)) return Status();
    if (std::chrono::steady_clock::now() >= deadline) {
      if (done == 0) {  // not reaped yet: no zombie is left in the caller
        kill(pid, SIGKILL);
        (void)waitpid(pid, nullptr, 0);
      }
      return unavailable("et-serverd (" + binary + ") did not listen on " + request.socket +
                         " within " + std::to_string(request.timeout.count()) +
                         " ms; its log: " + log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

bool daemon_listens(const std::string& socket) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket.size() >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, socket.c_str(), socket.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool listening = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return listening;
}

std::string find_serverd(const std::string& hint) {
  if (const char* bin = std::getenv("ETSERVER_BIN"); bin != nullptr && *bin != '\0') return bin;
  if (is_executable(hint)) return hint;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/et-serverd";
    if (is_executable(candidate)) return candidate;
  }
  return {};
}

bool spawn_enabled(const std::optional<bool>& option) {
  if (option.has_value()) return *option;
  const char* env = std::getenv("ETSERVER_SPAWN");
  if (env == nullptr) return true;
  const std::string v = env;
  return !(v == "0" || v == "no" || v == "false" || v == "off");
}

Status ensure_daemon(const SpawnRequest& request) {
  if (daemon_listens(request.socket)) return Status();
  // The default socket's private directory is made here when missing, as the daemon
  // would; any other directory must exist and be trusted.
  if (std::string why = et::wire::unsafe_socket_directory(request.socket); !why.empty()) {
    return unavailable("no et-serverd answers on " + request.socket +
                       ", and none can be started there: " + why);
  }
  et::wire::SpawnLock lock(request.socket);
  if (!lock.error().empty()) return unavailable("cannot start et-serverd: " + lock.error());
  if (!lock.lock_for(request.timeout)) {
    return unavailable("another process held " + request.socket + ".lock (starting or stopping" +
                       " et-serverd) for " + std::to_string(request.timeout.count()) + " ms");
  }
  if (daemon_listens(request.socket)) return Status();  // started while we waited
  const std::string binary = find_serverd(request.serverd_path);
  if (binary.empty()) {
    return unavailable(
        "no et-serverd answers on " + request.socket +
        " and none was found to start: pip install etclient (its wheel carries et-serverd), "
        "build it (scripts/build) and set ETSERVER_BIN to build/server/et-serverd, or put it "
        "on PATH; or start one yourself (et-serverd --socket " +
        request.socket + ")");
  }
  return start_detached(binary, request, request.socket + ".log");
}

}  // namespace etclient
