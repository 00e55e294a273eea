#include "proto/socket_trust.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace etserver {
namespace {

bool trusted_uid(uid_t uid) { return uid == getuid() || uid == 0; }

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
  if (!trusted_uid(st.st_uid) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
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
           "posing as et-serverd)";
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
           std::to_string(cred.pid) + "), not as you";
  }
  return "";
}

}  // namespace etserver
