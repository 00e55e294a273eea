#include "server/kserve/shm_region.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace et::server::kserve {
namespace {

// A POSIX shared-memory object of `size` bytes, unlinked at the end.
struct Object {
  std::string key;
  explicit Object(size_t size) : key("/et_shm_region_test_" + std::to_string(getpid())) {
    const int fd = shm_open(key.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
    close(fd);
  }
  ~Object() { shm_unlink(key.c_str()); }
  void truncate(size_t size) const {
    const int fd = shm_open(key.c_str(), O_RDWR, 0600);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
    close(fd);
  }
};

TEST(ShmRegion, ReadsAndWritesItsRange) {
  Object o(64);
  auto r = ShmRegion::open("r", o.key, 16, 32, getuid());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const std::vector<uint8_t> in = {1, 2, 3, 4};
  ASSERT_TRUE((*r)->write(4, in).ok());
  std::vector<uint8_t> out(4);
  ASSERT_TRUE((*r)->read(4, out).ok());
  EXPECT_EQ(out, in);
  EXPECT_EQ((*r)->read(30, out).code(), StatusCode::kInvalidArgument);  // past the region
}

TEST(ShmRegion, RefusesAnotherUsersObject) {
  Object o(64);
  auto r = ShmRegion::open("r", o.key, 0, 64, getuid() + 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(r.status().message().find("belongs to uid"), std::string::npos);
}

TEST(ShmRegion, RefusesKeysThatAreNotPlainNames) {
  for (const char* key : {"", "/", "x", "/a/b", "/..", "../etc/passwd"}) {
    auto r = ShmRegion::open("r", key, 0, 8, getuid());
    ASSERT_FALSE(r.ok()) << key;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << key;
  }
  Object o(64);
  EXPECT_EQ(ShmRegion::open("r", o.key, UINT64_MAX, 2, getuid()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ShmRegion::open("r", o.key, 60, 8, getuid()).status().code(), StatusCode::kOutOfRange);
}

TEST(ShmRegion, ATruncatedObjectIsAnErrorOnEveryUse) {
  Object o(64);
  auto r = ShmRegion::open("r", o.key, 0, 64, getuid());
  ASSERT_TRUE(r.ok());
  o.truncate(8);
  std::vector<uint8_t> buf(16);
  Status read = (*r)->read(0, buf);
  EXPECT_EQ(read.code(), StatusCode::kOutOfRange);
  EXPECT_NE(read.message().find("truncated"), std::string::npos);
  EXPECT_EQ((*r)->write(0, buf).code(), StatusCode::kOutOfRange);
  // Within what is left, it still works.
  EXPECT_TRUE((*r)->read(0, std::span<uint8_t>(buf.data(), 8)).ok());
}

// A FIFO planted in /dev/shm by a user the daemon's open fails for (so it would retry
// read-only, which on a FIFO waits for a writer forever): refused at once. The check
// runs in a child process as that user (nobody, when the test runs as root), with an
// alarm that kills it if the open blocks.
TEST(ShmRegion, AFifoInDevShmIsRefusedWithoutBlocking) {
  const std::string key = "/et_shm_region_fifo_" + std::to_string(getpid());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    const std::string path = "/dev/shm" + key;
    if (mkfifo(path.c_str(), 0444) != 0) _exit(4);
    alarm(5);
    auto r = ShmRegion::open("r", key, 0, 8, getuid());
    unlink(path.c_str());
    _exit(!r.ok() && r.status().code() == StatusCode::kPermissionDenied ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  unlink(("/dev/shm" + key).c_str());
  ASSERT_FALSE(WIFSIGNALED(status))
      << "the open blocked (killed by signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace et::server::kserve
