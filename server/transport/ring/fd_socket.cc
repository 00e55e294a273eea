#include "server/transport/ring/fd_socket.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "proto/fast_path.h"
#include "proto/socket_trust.h"
#include "runtime/core/exceptions.h"
#include "server/daemon/unix_socket.h"

namespace et::server {

using ::et::wire::FdReply;
using ::et::wire::FdRequest;
using ::et::wire::kFdLoadProgram;
using ::et::wire::kFdMagic;
using ::et::wire::kFdRegisterSegment;
using ::et::wire::kFdVersion;
namespace {

// At most this many clients hold a descriptor connection at once; more wait in the
// listen backlog.
constexpr size_t kMaxConnections = 512;
// After accept() runs out of descriptors, the listener rests this long instead of
// spinning on a socket it cannot accept from.
constexpr int kAcceptBackoffMs = 100;
// Programs loading by descriptor at once (each on a thread of its own).
constexpr size_t kMaxProgramLoads = 4;

// False when the reply could not be queued: a peer that does not read its replies is
// dropped rather than allowed to stall the one thread serving every client.
bool send_reply(int conn, const Status& status, uint64_t id) {
  FdReply reply{};
  reply.code = static_cast<uint32_t>(status.code());
  reply.id = id;
  std::snprintf(reply.message, sizeof(reply.message), "%s", status.message().c_str());
  return send(conn, &reply, sizeof(reply), MSG_NOSIGNAL | MSG_DONTWAIT) ==
         static_cast<ssize_t>(sizeof(reply));
}

}  // namespace

Result<std::unique_ptr<FdSocket>> FdSocket::start(const std::string& path, EtProtocol& protocol,
                                                  FastPathOptions fast_path) {
  ET_RETURN_IF_ERROR(claim_socket_path(path));
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return io_error(fmt::format("socket: {}", std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    close(fd);
    return invalid_argument(fmt::format("socket path {} is too long", path));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 64) != 0) {
    const int err = errno;
    close(fd);
    return io_error(fmt::format("cannot listen on {}: {}", path, std::strerror(err)));
  }
  return std::unique_ptr<FdSocket>(new FdSocket(fd, path, protocol, fast_path));
}

std::unique_ptr<FdSocket> FdSocket::adopt(int listen_fd, EtProtocol& protocol,
                                          FastPathOptions fast_path) {
  return std::unique_ptr<FdSocket>(new FdSocket(listen_fd, "", protocol, fast_path));
}

FdSocket::FdSocket(int listen_fd, std::string path, EtProtocol& protocol, FastPathOptions fast_path)
    : listen_fd_(listen_fd),
      path_(std::move(path)),
      protocol_(protocol),
      core_(protocol.core()),
      fast_path_(fast_path) {
  if (pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { serve(); });
}

FdSocket::~FdSocket() {
  if (wake_[1] >= 0) (void)write(wake_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  {
    MutexLock lock(loads_mu_);
    lock.wait(loads_done_, [this]() ET_REQUIRES(loads_mu_) { return loads_running_ == 0; });
  }
  close(listen_fd_);
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
  if (!path_.empty()) unlink(path_.c_str());
}

bool FdSocket::open_fast_channel(int conn, const std::string& token, int memfd) {
  // The channel keeps a duplicate of the connection: shutting it down tells the client
  // the channel ended; the client closing it (or dying) ends the channel (handle()).
  const int link = fcntl(conn, F_DUPFD_CLOEXEC, 0);
  if (link < 0) {
    close(memfd);
    return send_reply(conn, resource_exhausted("descriptor socket: out of descriptors"), 0);
  }
  std::weak_ptr<FastChannel> channel;
  Status opened = catch_exceptions("descriptor socket: ", [&] {
    return et::server::open_fast_channel(core_, fast_path_, protocol_, token, memfd, link, channel);
  });
  const auto deadline = static_cast<uint64_t>(core_.call_deadline().count());
  if (!send_reply(conn, opened, opened.ok() ? deadline : 0)) {
    if (auto c = channel.lock()) c->stop();
    return false;
  }
  if (opened.ok()) links_[conn] = std::move(channel);
  return true;
}

// Reads one request and the descriptor with it; replies. False when the peer is gone.
bool FdSocket::handle(int conn) {
  if (auto link = links_.find(conn); link != links_.end()) {
    // A channel's link carries nothing after its opening: any event ends the channel.
    if (auto channel = link->second.lock()) channel->stop();
    links_.erase(link);
    return false;
  }
  FdRequest req{};
  iovec iov{&req, sizeof(req)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0) return false;
  std::vector<int> fds;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds.push_back(fd);
      }
    }
  }
  auto refuse = [&](Status s) {
    for (int fd : fds) close(fd);
    return send_reply(conn, s, 0);
  };
  if (static_cast<size_t>(n) != sizeof(req) || std::memcmp(req.magic, kFdMagic, 4) != 0) {
    return refuse(invalid_argument("descriptor socket: not an ETFD request (docs/protocol.md)"));
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    return refuse(invalid_argument("descriptor socket: truncated request or too many descriptors"));
  }
  if (req.version != kFdVersion || (req.kind != kFdRegisterSegment && req.kind != kFdLoadProgram &&
                                    req.kind != et::wire::kFdOpenFastPath)) {
    return refuse(not_supported(
        fmt::format("descriptor socket: version {} kind {} unknown", req.version, req.kind)));
  }
  if (fds.size() != 1) {
    return refuse(invalid_argument(
        fmt::format("descriptor socket: {} descriptors attached, send exactly one", fds.size())));
  }
  const std::string token(req.session, sizeof(req.session));
  // Only a process of the session's own user may name it (a token seen by another user
  // the daemon serves is of no use to them).
  auto cred = et::wire::peer_credentials(conn);
  const SessionOwner caller =
      cred ? SessionOwner::local_process(cred->uid, cred->pid) : SessionOwner{};
  if (Status s = core_.check_caller(token, caller); !s.ok()) return refuse(s);
  if (req.kind == kFdLoadProgram) return start_program_load(conn, token, fds[0]);
  if (req.kind == et::wire::kFdOpenFastPath) return open_fast_channel(conn, token, fds[0]);
  // Takes the descriptor whatever happens.
  Result<uint64_t> id = catch_exceptions("descriptor socket: ",
                                         [&] { return core_.register_segment(token, fds[0]); });
  return send_reply(conn, id.status(), id.ok() ? *id : 0);
}

bool FdSocket::start_program_load(int conn, const std::string& token, int fd) {
  // Reading and verifying a program takes a while (up to --max-program-bytes); it runs
  // on a thread of its own, answering on a duplicate of the connection, so segment
  // registrations of every other client go on meanwhile.
  const int reply_fd = fcntl(conn, F_DUPFD_CLOEXEC, 0);
  {
    MutexLock lock(loads_mu_);
    if (reply_fd < 0 || loads_running_ >= kMaxProgramLoads) {
      close(fd);
      if (reply_fd >= 0) close(reply_fd);
      return send_reply(conn,
                        resource_exhausted(fmt::format(
                            "descriptor socket: {} programs are loading already; retry shortly",
                            kMaxProgramLoads)),
                        0);
    }
    ++loads_running_;
  }
  std::thread([this, reply_fd, token, fd] {
    Result<uint64_t> id =
        catch_exceptions("descriptor socket: ", [&] { return core_.load_program_fd(token, fd); });
    (void)send_reply(reply_fd, id.status(), id.ok() ? *id : 0);
    close(reply_fd);
    {
      MutexLock lock(loads_mu_);
      --loads_running_;
    }
    loads_done_.notify_all();
  }).detach();
  return true;
}

void FdSocket::serve() {
  std::vector<pollfd> fds = {{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
  bool resting = false;  // the listener is left out of poll() after EMFILE
  for (;;) {
    fds[1].fd = resting || fds.size() - 2 - links_.size() >= kMaxConnections ? -1 : listen_fd_;
    if (poll(fds.data(), fds.size(), resting ? kAcceptBackoffMs : -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("descriptor socket: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[0].revents) break;
    resting = false;
    fds[1].fd = listen_fd_;
    if (fds[1].revents & POLLIN) {
      const int conn = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn >= 0) {
        // The socket is 0600 (0660 with --socket-group), so only those the daemon serves
        // can connect; checked anyway.
        auto cred = et::wire::peer_credentials(conn);
        if (std::string why = cred ? et::wire::refused_client(*cred, core_.limits().socket_group)
                                   : "the kernel does not say who it is";
            !why.empty()) {
          spdlog::warn("descriptor socket: refused a connection: {}", why);
          close(conn);
          continue;
        }
        fds.push_back({conn, POLLIN, 0});
      } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        spdlog::warn("descriptor socket: cannot accept ({}); resting {} ms", std::strerror(errno),
                     kAcceptBackoffMs);
        resting = true;
      }
    }
    for (size_t i = 2; i < fds.size();) {
      if (fds[i].revents && !handle(fds[i].fd)) {
        close(fds[i].fd);
        fds.erase(fds.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }
  for (size_t i = 2; i < fds.size(); ++i) close(fds[i].fd);
  links_.clear();
}

}  // namespace et::server
