#include "server/transport/listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

#include "proto/socket_trust.h"
#include "server/daemon/unix_socket.h"

namespace et::server {
namespace {

// A socket address as /proc/net/tcp{,6} writes it: the address's 32-bit words as
// stored, in hex, then ':' and the port in hex. `mapped`: an IPv4 address as an IPv6
// socket holds it (::ffff:a.b.c.d).
std::string proc_net_address(const sockaddr_storage& a, bool mapped = false) {
  in6_addr six{};
  uint16_t port = 0;
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    port = ntohs(in.sin_port);
    if (!mapped) return fmt::format("{:08X}:{:04X}", in.sin_addr.s_addr, port);
    six.s6_addr[10] = six.s6_addr[11] = 0xff;
    std::memcpy(&six.s6_addr[12], &in.sin_addr, 4);
  } else {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    port = ntohs(in6.sin6_port);
    six = in6.sin6_addr;
  }
  uint32_t words[4];
  std::memcpy(words, &six, sizeof(words));
  return fmt::format("{:08X}{:08X}{:08X}{:08X}:{:04X}", words[0], words[1], words[2], words[3],
                     port);
}

// An IPv4-mapped IPv6 address as the IPv4 one it carries.
sockaddr_storage unmapped(const sockaddr_storage& a) {
  if (a.ss_family != AF_INET6) return a;
  const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
  if (!IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) return a;
  sockaddr_storage out{};
  auto& in = reinterpret_cast<sockaddr_in&>(out);
  in.sin_family = AF_INET;
  in.sin_port = in6.sin6_port;
  std::memcpy(&in.sin_addr, &in6.sin6_addr.s6_addr[12], 4);
  return out;
}

std::string printable_address(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &in.sin_addr, host, sizeof(host));
    return fmt::format("{}:{}", host, ntohs(in.sin_port));
  }
  const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
  inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof(host));
  return fmt::format("[{}]:{}", host, ntohs(in6.sin6_port));
}

// The owner (uid) and inode of the TCP socket whose local end is `local` and remote
// end `remote`, asked of the kernel by its exact 4-tuple (sock_diag netlink, what `ss`
// uses: a hash lookup, microseconds). Both in the same family. False when there is no
// such socket here or the kernel does not answer.
bool diag_lookup(const sockaddr_storage& local, const sockaddr_storage& remote, uid_t& uid,
                 unsigned long& inode) {
  const int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return false;
  struct {
    nlmsghdr header;
    inet_diag_req_v2 req;
  } msg{};
  msg.header.nlmsg_len = sizeof(msg);
  msg.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.header.nlmsg_flags = NLM_F_REQUEST;
  msg.req.sdiag_family = static_cast<uint8_t>(local.ss_family);
  msg.req.sdiag_protocol = IPPROTO_TCP;
  msg.req.idiag_states = ~0U;
  msg.req.id.idiag_cookie[0] = msg.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  if (local.ss_family == AF_INET) {
    const auto& l = reinterpret_cast<const sockaddr_in&>(local);
    const auto& r = reinterpret_cast<const sockaddr_in&>(remote);
    msg.req.id.idiag_sport = l.sin_port;
    msg.req.id.idiag_dport = r.sin_port;
    std::memcpy(msg.req.id.idiag_src, &l.sin_addr, 4);
    std::memcpy(msg.req.id.idiag_dst, &r.sin_addr, 4);
  } else {
    const auto& l = reinterpret_cast<const sockaddr_in6&>(local);
    const auto& r = reinterpret_cast<const sockaddr_in6&>(remote);
    msg.req.id.idiag_sport = l.sin6_port;
    msg.req.id.idiag_dport = r.sin6_port;
    std::memcpy(msg.req.id.idiag_src, &l.sin6_addr, 16);
    std::memcpy(msg.req.id.idiag_dst, &r.sin6_addr, 16);
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  bool found = false;
  if (sendto(fd, &msg, sizeof(msg), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) ==
      static_cast<ssize_t>(sizeof(msg))) {
    alignas(nlmsghdr) char buf[1024];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n >= static_cast<ssize_t>(sizeof(nlmsghdr))) {
      const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
      if (NLMSG_OK(h, static_cast<unsigned>(n)) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
          h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
        const auto* d = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
        // A socket no process holds (closed by its owner, lingering in FIN_WAIT or
        // TIME_WAIT) has no inode, and the kernel reports uid 0 for it: it proves
        // nobody's identity.
        if (d->idiag_inode != 0) {
          uid = d->idiag_uid;
          inode = d->idiag_inode;
          found = true;
        }
      }
    }
  }
  close(fd);
  return found;
}

// An IPv4 address as an IPv6 socket holds it (::ffff:a.b.c.d).
sockaddr_storage as_mapped(const sockaddr_storage& a) {
  if (a.ss_family != AF_INET) return a;
  const auto& in = reinterpret_cast<const sockaddr_in&>(a);
  sockaddr_storage out{};
  auto& in6 = reinterpret_cast<sockaddr_in6&>(out);
  in6.sin6_family = AF_INET6;
  in6.sin6_port = in.sin_port;
  in6.sin6_addr.s6_addr[10] = in6.sin6_addr.s6_addr[11] = 0xff;
  std::memcpy(&in6.sin6_addr.s6_addr[12], &in.sin_addr, 4);
  return out;
}

// The uid owning the socket connected from `client` to `server` on this machine, from
// the kernel's tables; false when the client is not a socket of this network namespace.
// An IPv4 client may hold an IPv4 socket (in /proc/net/tcp) or a dual-stack IPv6 one
// (in /proc/net/tcp6, with mapped addresses), whichever way the server sees it.
bool local_tcp_owner(const sockaddr_storage& client_seen, const sockaddr_storage& server_seen,
                     uid_t& uid, unsigned long* inode = nullptr) {
  const sockaddr_storage client = unmapped(client_seen), server = unmapped(server_seen);
  unsigned long found_inode = 0;
  // The client's socket may be IPv4, or dual-stack IPv6 holding mapped addresses.
  if (diag_lookup(client, server, uid, found_inode) ||
      (client.ss_family == AF_INET &&
       diag_lookup(as_mapped(client), as_mapped(server), uid, found_inode))) {
    if (inode) *inode = found_inode;
    return true;
  }
  // Without sock_diag (a kernel or sandbox without it), the tables in /proc.
  struct Table {
    const char* path;
    bool mapped;
  };
  std::vector<Table> tables;
  if (client.ss_family == AF_INET) tables.push_back({"/proc/net/tcp", false});
  tables.push_back({"/proc/net/tcp6", client.ss_family == AF_INET});
  for (const Table& t : tables) {
    const std::string local = proc_net_address(client, t.mapped);
    const std::string remote = proc_net_address(server, t.mapped);
    std::ifstream table(t.path);
    std::string line;
    std::getline(table, line);  // the header
    while (std::getline(table, line)) {
      std::istringstream fields(line);
      std::string slot, l, r, state, queues, timer, retransmits;
      unsigned long owner = 0, timeout = 0, socket_inode = 0;
      if (!(fields >> slot >> l >> r >> state >> queues >> timer >> retransmits >> owner >>
            timeout >> socket_inode)) {
        continue;
      }
      if (l == local && r == remote) {
        if (socket_inode == 0) return false;  // an orphan: see diag_lookup
        uid = static_cast<uid_t>(owner);
        if (inode) *inode = socket_inode;
        return true;
      }
    }
  }
  return false;
}

// A numeric address and port as a socket address; false when not numeric.
bool parse_address(const std::string& host, int port, sockaddr_storage& out) {
  out = {};
  auto& in = reinterpret_cast<sockaddr_in&>(out);
  auto& in6 = reinterpret_cast<sockaddr_in6&>(out);
  if (inet_pton(AF_INET, host.c_str(), &in.sin_addr) == 1) {
    in.sin_family = AF_INET;
    in.sin_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  if (inet_pton(AF_INET6, host.c_str(), &in6.sin6_addr) == 1) {
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  return false;
}

// The start time of process `pid` (field 22 of /proc/PID/stat), or empty.
std::string start_time(pid_t pid) {
  std::ifstream stat_file(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  const size_t close_paren = text.rfind(')');  // the command name may hold spaces
  if (close_paren == std::string::npos) return "";
  std::istringstream rest(text.substr(close_paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

// The process of `uid` holding socket `inode`, or 0.
pid_t socket_owner(uid_t uid, unsigned long inode) {
  const std::string want = fmt::format("socket:[{}]", inode);
  std::error_code ec;
  for (const auto& proc : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat st {};
    if (stat(proc.path().c_str(), &st) != 0 || st.st_uid != uid) continue;
    std::error_code fd_ec;
    for (const auto& fd : std::filesystem::directory_iterator(proc.path() / "fd", fd_ec)) {
      char target[64];
      const ssize_t n = readlink(fd.path().c_str(), target, sizeof(target) - 1);
      if (n > 0 && std::string_view(target, static_cast<size_t>(n)) == want) {
        return static_cast<pid_t>(std::stol(name));
      }
    }
  }
  return 0;
}

// What a descriptor refers to (device and inode); zeros when it is closed.
std::pair<dev_t, ino_t> file_id(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return {0, 0};
  return {st.st_dev, st.st_ino};
}

Status bind_tcp(const std::string& address, int& fd, int& port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) {
    return invalid_argument(fmt::format("'{}': give unix:PATH or HOST:PORT", address));
  }
  std::string host = address.substr(0, colon);
  const std::string service = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc =
          getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    return invalid_argument(fmt::format("'{}': {}", address, gai_strerror(rc)));
  }
  std::string last_error = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) continue;
    const int on = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(s, a->ai_addr, a->ai_addrlen) == 0 && listen(s, 128) == 0) {
      sockaddr_storage bound{};
      socklen_t len = sizeof(bound);
      getsockname(s, reinterpret_cast<sockaddr*>(&bound), &len);
      port = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in&>(bound).sin_port
                                              : reinterpret_cast<sockaddr_in6&>(bound).sin6_port);
      fd = s;
      freeaddrinfo(found);
      return Status();
    }
    last_error = std::strerror(errno);
    close(s);
  }
  freeaddrinfo(found);
  return io_error(fmt::format("cannot listen on {}: {}", address, last_error));
}

Status bind_unix(const std::string& path, int& fd) {
  ET_RETURN_IF_ERROR(claim_socket_path(path));
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return invalid_argument(fmt::format("socket path {} is too long", path));
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s < 0) return io_error(fmt::format("socket: {}", std::strerror(errno)));
  // The daemon's umask (077) makes the socket its user's only.
  if (bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(s, 128) != 0) {
    const int err = errno;
    close(s);
    return io_error(fmt::format("cannot listen on unix:{}: {}", path, std::strerror(err)));
  }
  fd = s;
  return Status();
}

}  // namespace

Peer tcp_peer(const std::string& client_addr, int client_port, const std::string& server_addr,
              int server_port, bool with_process) {
  Peer p;
  p.address = fmt::format("{}:{}", client_addr, client_port);
  sockaddr_storage client{}, server{};
  if (!parse_address(client_addr, client_port, client) ||
      !parse_address(server_addr, server_port, server)) {
    return p;
  }
  unsigned long inode = 0;
  p.local = local_tcp_owner(client, server, p.uid, &inode);
  if (p.local && with_process) {
    p.pid = socket_owner(p.uid, inode);
    // A process not found (another PID namespace): its state lasts until removed.
    p.connection = p.pid ? fmt::format("pid:{}/{}", p.pid, start_time(p.pid)) : "kept";
  }
  return p;
}

bool process_alive(const std::string& connection) {
  if (connection.rfind("pid:", 0) != 0) return false;
  const size_t slash = connection.find('/');
  if (slash == std::string::npos) return false;
  pid_t pid = 0;
  for (size_t i = 4; i < slash; ++i) {
    if (connection[i] < '0' || connection[i] > '9') return false;
    pid = pid * 10 + (connection[i] - '0');
  }
  return pid > 0 && start_time(pid) == connection.substr(slash + 1);
}

Result<std::unique_ptr<Listener>> Listener::open(const std::string& address, size_t max_connections,
                                                 bool tcp_shared_memory) {
  auto l = std::unique_ptr<Listener>(new Listener());
  l->address_ = address;
  l->max_connections_ = max_connections;
  l->tcp_shared_memory_ = tcp_shared_memory;
  if (address.rfind("unix:", 0) == 0) {
    l->unix_path_ = address.substr(5);
    if (l->unix_path_.empty()) return invalid_argument("unix: needs a path (unix:/run/x.sock)");
    ET_RETURN_IF_ERROR(bind_unix(l->unix_path_, l->listen_fd_));
    l->is_unix_ = true;
  } else {
    ET_RETURN_IF_ERROR(bind_tcp(address, l->listen_fd_, l->port_));
  }
  l->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (l->stop_fd_ < 0) return io_error(fmt::format("eventfd: {}", std::strerror(errno)));
  return l;
}

Result<std::unique_ptr<Listener>> Listener::adopt(int listen_fd, const std::string& name,
                                                  size_t max_connections, bool tcp_shared_memory) {
  auto l = std::unique_ptr<Listener>(new Listener());
  l->listen_fd_ = listen_fd;
  l->address_ = name;
  l->max_connections_ = max_connections;
  l->tcp_shared_memory_ = tcp_shared_memory;
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  int type = 0;
  socklen_t type_len = sizeof(type);
  if (getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0 ||
      getsockopt(listen_fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 || type != SOCK_STREAM) {
    return invalid_argument(fmt::format("{}: not a listening stream socket", name));
  }
  if (bound.ss_family == AF_UNIX) {
    l->is_unix_ = true;
  } else if (bound.ss_family == AF_INET) {
    l->port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  } else if (bound.ss_family == AF_INET6) {
    l->port_ = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  } else {
    return invalid_argument(fmt::format("{}: neither a Unix nor a TCP socket", name));
  }
  // Accepting is non-blocking (the accept loop polls).
  const int flags = fcntl(listen_fd, F_GETFL);
  if (flags >= 0) (void)fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK);
  l->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (l->stop_fd_ < 0) return io_error(fmt::format("eventfd: {}", std::strerror(errno)));
  return l;
}

Listener::~Listener() {
  stop();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
  if (!unix_path_.empty()) unlink(unix_path_.c_str());
}

void Listener::start(Serve serve) {
  serve_ = std::move(serve);
  thread_ = std::thread([this] { accept_loop(); });
}

void Listener::stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof(one));
  thread_.join();
}

Peer Listener::describe(int fd) const {
  Peer p;
  p.connection = fmt::format("fd:{}/{}", fd, file_id(fd).second);
  if (is_unix_) {
    p.address = "unix";
    if (auto cred = et::wire::peer_credentials(fd)) {
      p.local = true;
      p.uid = cred->uid;
      p.pid = cred->pid;
      p.gid = cred->gid;
      p.groups = std::move(cred->groups);
    }
    return p;
  }
  sockaddr_storage client{}, server{};
  socklen_t client_len = sizeof(client), server_len = sizeof(server);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&client), &client_len) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&server), &server_len) != 0) {
    return p;
  }
  p.address = printable_address(client);
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  p.local = tcp_shared_memory_ && local_tcp_owner(client, server, p.uid);
  return p;
}

void Listener::accept_loop() {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  while (true) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("{}: poll: {}", log_name(), std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        spdlog::warn("{}: out of descriptors; connections wait", log_name());
        poll(nullptr, 0, 100);
      }
      continue;
    }
    sweep();
    Accepted a{file_id(fd), describe(fd)};
    {
      MutexLock lock(mu_);
      if (accepted_.size() >= max_connections_) {
        spdlog::warn("{}: {} connections open, the limit; refusing {}", log_name(),
                     accepted_.size(), a.peer.address);
        close(fd);
        continue;
      }
      accepted_[fd] = a;
    }
    spdlog::debug("{}: connection {} from {}{}", log_name(), a.peer.connection, a.peer.address,
                  a.peer.local ? fmt::format(" (uid {})", a.peer.uid) : " (remote)");
    serve_(fd);
  }
}

namespace {

// The descriptor in a gRPC peer name "fd:N" or a Peer::connection "fd:N/INODE"; -1.
int descriptor_of(const std::string& name) {
  if (name.rfind("fd:", 0) != 0) return -1;
  int fd = 0;
  size_t i = 3;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && fd < 1'000'000'000; ++i) {
    fd = fd * 10 + (name[i] - '0');
  }
  return i == 3 ? -1 : fd;
}

}  // namespace

Result<Peer> Listener::identify(const std::string& grpc_peer) const {
  if (const int fd = descriptor_of(grpc_peer); fd >= 0) {
    MutexLock lock(mu_);
    auto it = accepted_.find(fd);
    if (it != accepted_.end() && file_id(fd) == it->second.id) return it->second.peer;
  }
  return not_found(fmt::format("connection {} is not open", grpc_peer));
}

bool Listener::alive(const std::string& connection) const {
  auto peer = identify(connection);
  return peer.ok() && peer->connection == connection;
}

void Listener::sweep() {
  MutexLock lock(mu_);
  const size_t before = accepted_.size();
  for (auto it = accepted_.begin(); it != accepted_.end();) {
    it = file_id(it->first) == it->second.id ? std::next(it) : accepted_.erase(it);
  }
  if (before && accepted_.empty()) idle_since_ = std::chrono::steady_clock::now();
}

std::chrono::steady_clock::duration Listener::idle_for() const {
  MutexLock lock(mu_);
  if (!accepted_.empty()) return std::chrono::steady_clock::duration::zero();
  return std::chrono::steady_clock::now() - idle_since_;
}

}  // namespace et::server
