// M7 and L7 of the security review: another local user must not be able to squat the
// daemon's socket path or pose as the daemon, and a long path must not be truncated
// into another one.
#include "proto/socket_trust.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "proto/fd_client.h"
#include "proto/fd_protocol.h"

namespace et::wire {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/et-trust-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A listening socket file at `path` (closed again: only the file matters here).
void make_socket_file(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  close(fd);
}

TEST(SocketTrust, DaemonRefusesADirectoryOthersCanWrite) {
  TempDir dir;
  EXPECT_EQ(unsafe_socket_directory(dir.path() + "/s.sock"), "");  // mkdtemp: 0700
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);                  // like /tmp
  const std::string why = unsafe_socket_directory(dir.path() + "/s.sock");
  EXPECT_NE(why.find("can be changed by other users"), std::string::npos) << why;
  EXPECT_NE(unsafe_socket_directory("/tmp/s.sock"), "");
}

TEST(SocketTrust, DefaultPathIsInAPrivateDirectory) {
  unsetenv("ETSERVER_SOCKET");
  unsetenv("XDG_RUNTIME_DIR");
  const std::string path = default_socket_path();
  EXPECT_EQ(path, "/tmp/et-serverd-" + std::to_string(getuid()) + "/et-serverd.sock");
  EXPECT_EQ(unsafe_socket_directory(path), "");  // created 0700 when missing
  struct stat st {};
  ASSERT_EQ(stat(path.substr(0, path.rfind('/')).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(SocketTrust, ClientRefusesASocketOfAnotherUser) {
  TempDir dir;
  const std::string path = dir.path() + "/s.sock";
  EXPECT_EQ(untrusted_socket(path), "");  // nothing there: connecting will say so
  make_socket_file(path);
  EXPECT_EQ(untrusted_socket(path), "");
  // Another user's socket (the tests may run as root, who can make one).
  if (chown(path.c_str(), 4242, 4242) != 0) GTEST_SKIP() << "cannot chown: not root";
  const std::string why = untrusted_socket(path);
  EXPECT_NE(why.find("belongs to uid 4242"), std::string::npos) << why;
}

TEST(SocketTrust, ClientRefusesASocketOthersCanReplace) {
  TempDir dir;
  const std::string path = dir.path() + "/s.sock";
  make_socket_file(path);
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);  // writable by all, not sticky
  const std::string why = untrusted_socket(path);
  EXPECT_NE(why.find("lets other users replace"), std::string::npos) << why;
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);  // sticky: only the owner may replace
  EXPECT_EQ(untrusted_socket(path), "");
}

TEST(SocketTrust, PeerOfOwnProcessIsTrusted) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  EXPECT_EQ(untrusted_peer(pair[0]), "");
  close(pair[0]);
  close(pair[1]);
  EXPECT_NE(untrusted_peer(-1), "");
}

TEST(FdClient, ALongPathIsRefusedNotTruncated) {
  const std::string path = "/tmp/" + std::string(200, 'x') + ".fd";
  const FdExchange reply = send_descriptor(path, "token", -1, kFdRegisterSegment);
  EXPECT_FALSE(reply.delivered);
  EXPECT_NE(reply.message.find("longer than a Unix socket path may be"), std::string::npos)
      << reply.message;
}

}  // namespace
}  // namespace et::wire
