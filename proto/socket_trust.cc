#include "proto/socket_trust.h"

#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace et::wire {
namespace {

bool own_or_root(uid_t uid) { return uid == getuid() || uid == 0; }

// $ETSERVER_DAEMON_USER: user names or uids, separated by commas.
bool named_daemon_user(uid_t uid) {
  const char* env = std::getenv("ETSERVER_DAEMON_USER");
  if (env == nullptr) return false;
  std::string names = env;
  for (size_t start = 0; start <= names.size();) {
    size_t end = names.find(',', start);
    if (end == std::string::npos) end = names.size();
    const std::string name = names.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    if (name.find_first_not_of("0123456789") == std::string::npos) {
      if (name.size() < 11 && std::stoul(name) == uid) return true;
      continue;
    }
    passwd entry{}, *found = nullptr;
    std::vector<char> buffer(16384);
    if (getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) == 0 && found &&
        found->pw_uid == uid) {
      return true;
    }
  }
  return false;
}

// Whom a client trusts to be the daemon.
bool trusted_uid(uid_t uid) { return own_or_root(uid) || named_daemon_user(uid); }

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string private_default_directory() { return "/tmp/et-serverd-" + std::to_string(getuid()); }

std::string describe_mode(const struct stat& st) {
  char octal[8];
  std::snprintf(octal, sizeof(octal), "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return std::string(octal) + ", owner uid " + std::to_string(st.st_uid);
}

}  // namespace

std::string default_socket_path() {
  if (const char* env = std::getenv("ETSERVER_SOCKET"); env && *env) return env;
  if (const char* dir = std::getenv("XDG_RUNTIME_DIR"); dir && *dir) {
    return std::string(dir) + "/et-serverd.sock";
  }
  return private_default_directory() + "/et-serverd.sock";
}

std::string unsafe_socket_directory(const std::string& socket_path) {
  const std::string dir = directory_of(socket_path);
  if (dir == private_default_directory() && mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return "cannot create " + dir + ": " + std::strerror(errno);
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) {
    return dir +
           " is not a directory (a symbolic link is not accepted for the socket's "
           "directory)";
  }
  if (!own_or_root(st.st_uid) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "the socket's directory " + dir + " (mode " + describe_mode(st) +
           ") can be changed by other users, who could take over the socket path; put the "
           "socket in a directory only you can write (mode 0700), e.g. $XDG_RUNTIME_DIR, or "
           "leave --socket unset for the default " +
           private_default_directory() + "/";
  }
  return "";
}

std::string untrusted_socket(const std::string& socket_path) {
  struct stat st {};
  if (lstat(socket_path.c_str(), &st) != 0) return "";  // no daemon: connecting says so
  if (!S_ISSOCK(st.st_mode)) return socket_path + " is not a socket";
  if (!trusted_uid(st.st_uid)) {
    return socket_path + " belongs to uid " + std::to_string(st.st_uid) +
           ", not to you: refusing to hand it tensors or shared memory (another user may be "
           "posing as et-serverd; a daemon shared with your group runs as a user of its own: "
           "name it in ETSERVER_DAEMON_USER)";
  }
  const std::string dir = directory_of(socket_path);
  struct stat dst {};
  if (stat(dir.c_str(), &dst) != 0) return dir + ": " + std::strerror(errno);
  const bool others_write = (dst.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (others_write && (dst.st_mode & S_ISVTX) == 0) {
    return "the directory " + dir + " (mode " + describe_mode(dst) + ") lets other users replace " +
           socket_path + "; use a socket in a private directory";
  }
  return "";
}

std::string untrusted_peer(int connected_fd) {
  ucred cred{};
  socklen_t length = sizeof(cred);
  if (getsockopt(connected_fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
    return std::string("cannot tell who is at the other end (SO_PEERCRED: ") +
           std::strerror(errno) + ")";
  }
  if (!trusted_uid(cred.uid)) {
    return "the peer runs as uid " + std::to_string(cred.uid) + " (pid " +
           std::to_string(cred.pid) +
           "), not as you (a daemon shared with your group: name its user in "
           "ETSERVER_DAEMON_USER)";
  }
  return "";
}

std::optional<PeerCredentials> peer_credentials(int connected_fd) {
  ucred cred{};
  socklen_t length = sizeof(cred);
  if (getsockopt(connected_fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) return std::nullopt;
  PeerCredentials peer{cred.uid, cred.gid, cred.pid, {}};
  std::vector<gid_t> groups(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    socklen_t bytes = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (getsockopt(connected_fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &bytes) == 0) {
      groups.resize(bytes / sizeof(gid_t));
      peer.groups = std::move(groups);
      break;
    }
    if (errno != ERANGE) break;  // no groups known: the primary one still counts
    groups.resize(bytes / sizeof(gid_t) + 1);
  }
  return peer;
}

std::string refused_client(const PeerCredentials& peer, int64_t group) {
  if (own_or_root(peer.uid)) return "";
  if (group >= 0) {
    const auto g = static_cast<gid_t>(group);
    if (peer.gid == g ||
        std::find(peer.groups.begin(), peer.groups.end(), g) != peer.groups.end()) {
      return "";
    }
  }
  return "uid " + std::to_string(peer.uid) + " (pid " + std::to_string(peer.pid) +
         ") may not use this et-serverd: it serves uid " + std::to_string(getuid()) +
         (group >= 0 ? " and members of group " + std::to_string(group) + " (--socket-group)"
                     : " only (share it with a group: et-serverd --socket-group GROUP)");
}

}  // namespace et::wire
