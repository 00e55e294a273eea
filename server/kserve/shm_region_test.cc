#include "server/kserve/shm_region.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
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

}  // namespace
}  // namespace et::server::kserve
