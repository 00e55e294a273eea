#include "runtime/core/printable.h"

#include <gtest/gtest.h>

namespace et {
namespace {

// L8 of the security review: a method name carrying a newline forged a log line.
TEST(Printable, EscapesControlBytesAndKeepsText) {
  EXPECT_EQ(printable("forward"), "forward");
  EXPECT_EQ(printable("a\n[error] forged\x1b[2J\\"), "a\\x0a[error] forged\\x1b[2J\\x5c");
  EXPECT_EQ(printable(std::string_view("\0\xff", 2)), "\\x00\\xff");
}

}  // namespace
}  // namespace et
