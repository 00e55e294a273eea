#include "server/transport/listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace et::server {
namespace {

// A loopback TCP connection made in this process: the listening socket, the client's
// end and the server's accepted end, with their ports.
struct Loopback {
  int listener = -1, client = -1, server = -1;
  int server_port = 0, client_port = 0;
  Loopback() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(listen(listener, 1), 0);
    getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    server_port = ntohs(a.sin_port);
    client = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(client, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    server = accept(listener, nullptr, nullptr);
    sockaddr_in c{};
    len = sizeof(c);
    getsockname(client, reinterpret_cast<sockaddr*>(&c), &len);
    client_port = ntohs(c.sin_port);
  }
  ~Loopback() {
    for (int fd : {listener, client, server}) {
      if (fd >= 0) close(fd);
    }
  }
};

TEST(TcpPeer, ALoopbackClientIsItsOwner) {
  Loopback l;
  const Peer p = tcp_peer("127.0.0.1", l.client_port, "127.0.0.1", l.server_port, false);
  EXPECT_TRUE(p.local);
  EXPECT_EQ(p.uid, getuid());
  const Peer with_process = tcp_peer("127.0.0.1", l.client_port, "127.0.0.1", l.server_port, true);
  EXPECT_EQ(with_process.pid, getpid());
}

// A client that sent its request and closed its socket at once leaves a socket no
// process holds (FIN_WAIT, then a TIME_WAIT entry the kernel reports as uid 0): it
// must not identify anyone, least of all root.
TEST(TcpPeer, AClosedClientSocketIdentifiesNobody) {
  Loopback l;
  close(l.client);
  l.client = -1;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the FIN is acknowledged
  const Peer p = tcp_peer("127.0.0.1", l.client_port, "127.0.0.1", l.server_port, true);
  EXPECT_FALSE(p.local) << "uid " << p.uid;
}

TEST(TcpPeer, AnUnknownConnectionIsRemote) {
  Loopback l;
  EXPECT_FALSE(tcp_peer("127.0.0.1", 1, "127.0.0.1", l.server_port, false).local);
  EXPECT_FALSE(tcp_peer("not an address", 1, "127.0.0.1", l.server_port, false).local);
}

}  // namespace
}  // namespace et::server
