#include "server/daemon/unix_socket.h"

#include <fmt/format.h>
#include <grp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "proto/socket_trust.h"

namespace et::server {

std::string default_socket_path() { return et::wire::default_socket_path(); }

Status claim_socket_path(const std::string& path) {
  if (std::string why = et::wire::unsafe_socket_directory(path); !why.empty()) {
    return failed_precondition(why);
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status();
    return io_error(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return failed_precondition(
        fmt::format("{} exists and is not a socket; remove it or choose "
                    "another --socket",
                    path));
  }
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return invalid_argument(fmt::format("socket path {} is too long", path));
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  for (int type : {SOCK_STREAM, SOCK_SEQPACKET}) {
    const int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (fd < 0) return io_error(fmt::format("socket: {}", std::strerror(errno)));
    const int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    const int err = errno;
    close(fd);
    if (rc == 0) {
      return failed_precondition(fmt::format(
          "another server is listening on {}; stop it first or choose another --socket", path));
    }
    if (err != ECONNREFUSED && err != EPROTOTYPE) {
      return io_error(fmt::format("{}: {}", path, std::strerror(err)));
    }
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return io_error(
        fmt::format("cannot remove the stale socket {}: {}", path, std::strerror(errno)));
  }
  spdlog::warn("replaced a stale socket at {} (a previous daemon did not exit cleanly)", path);
  return Status();
}

Status share_socket_with_group(const std::string& path, gid_t group) {
  if (chown(path.c_str(), static_cast<uid_t>(-1), group) != 0 || chmod(path.c_str(), 0660) != 0) {
    return io_error(fmt::format(
        "--socket-group: cannot give {} to group {}: {} (the daemon's user must be a member "
        "of the group)",
        path, group, std::strerror(errno)));
  }
  return Status();
}

Result<gid_t> find_group(const std::string& name) {
  if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos &&
      name.size() < 10) {
    return static_cast<gid_t>(std::stoul(name));
  }
  group entry{}, *found = nullptr;
  std::vector<char> buffer(65536);
  if (getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return invalid_argument(
        fmt::format("--socket-group {}: no such group (give a group name or number)", name));
  }
  return found->gr_gid;
}

}  // namespace et::server
