#include "server/core/segment.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

namespace et::server {
namespace {

int make_memfd(size_t size, bool seal) {
  const int fd = memfd_create("et-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
  if (seal) {
    EXPECT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  }
  return fd;
}

TEST(Segment, MapsASealedMemfdAndChecksRanges) {
  auto s = Segment::adopt(make_memfd(4096, true), 1 << 20);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->size(), 4096u);
  EXPECT_TRUE((*s)->range(0, 4096).ok());
  EXPECT_TRUE((*s)->range(4000, 96).ok());
  auto past = (*s)->range(4000, 97);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), StatusCode::kOutOfRange);
  EXPECT_FALSE((*s)->range(UINT64_MAX, 2).ok());  // overflow
  EXPECT_FALSE((*s)->range(1, UINT64_MAX).ok());
}

TEST(Segment, RefusesUnsealedNonMemfdEmptyAndOversized) {
  auto unsealed = Segment::adopt(make_memfd(4096, false), 1 << 20);
  ASSERT_FALSE(unsealed.ok());
  EXPECT_NE(unsealed.status().message().find("F_SEAL_SHRINK"), std::string::npos);

  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  close(pipe_fds[1]);
  auto not_memfd = Segment::adopt(pipe_fds[0], 1 << 20);
  ASSERT_FALSE(not_memfd.ok());
  EXPECT_NE(not_memfd.status().message().find("memfd"), std::string::npos);

  EXPECT_FALSE(Segment::adopt(make_memfd(0, true), 1 << 20).ok());
  auto big = Segment::adopt(make_memfd(8192, true), 4096);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace et::server
