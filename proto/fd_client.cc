#include "proto/fd_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "proto/fd_protocol.h"
#include "proto/socket_trust.h"

namespace et::wire {

FdExchange send_descriptor(const std::string& fd_socket, const std::string& session, int fd,
                           uint16_t kind, int* keep_connection) {
  FdExchange out;
  if (keep_connection) *keep_connection = -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (fd_socket.size() >= sizeof(addr.sun_path)) {
    // Truncating would connect to some other path.
    out.message = "descriptor socket path is longer than a Unix socket path may be (" +
                  std::to_string(sizeof(addr.sun_path) - 1) + " bytes): " + fd_socket;
    return out;
  }
  std::memcpy(addr.sun_path, fd_socket.c_str(), fd_socket.size() + 1);
  // The daemon named this path; descriptors give read and write access to our memory,
  // so whoever is at the other end must be the daemon's (and our) user.
  if (std::string why = untrusted_socket(fd_socket); !why.empty()) {
    out.message = why;
    return out;
  }
  const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    out.message = "cannot connect to " + fd_socket + ": " + std::strerror(errno);
    if (sock >= 0) close(sock);
    return out;
  }
  if (std::string why = untrusted_peer(sock); !why.empty()) {
    out.message = "refusing to send a descriptor to " + fd_socket + ": " + why;
    close(sock);
    return out;
  }
  FdRequest req{};
  std::memcpy(req.magic, kFdMagic, 4);
  req.version = kFdVersion;
  req.kind = kind;
  std::memcpy(req.session, session.data(), std::min(session.size(), sizeof(req.session)));
  iovec iov{&req, sizeof(req)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  FdReply reply{};
  const bool sent = sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof(req));
  const bool got =
      sent && recv(sock, &reply, sizeof(reply), 0) == static_cast<ssize_t>(sizeof(reply));
  if (got && keep_connection) {
    *keep_connection = sock;
  } else {
    close(sock);
  }
  if (!got) {
    out.message = "the daemon's descriptor socket did not answer";
    return out;
  }
  reply.message[sizeof(reply.message) - 1] = 0;
  out.delivered = true;
  out.code = reply.code;
  out.id = reply.id;
  out.message = reply.message;
  return out;
}

}  // namespace et::wire
