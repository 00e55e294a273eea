#include "proto/sha256.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace et::wire {
namespace {

std::string hash(const std::string& s) {
  return sha256_hex({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 examples, and lengths around the padding boundary.
  EXPECT_EQ(hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hash(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesHashAsTheWhole) {
  const std::string text(100003, 'x');
  Sha256 hasher;
  for (size_t at = 0; at < text.size(); at += 4096) {
    const size_t n = std::min<size_t>(4096, text.size() - at);
    hasher.update({reinterpret_cast<const uint8_t*>(text.data()) + at, n});
  }
  EXPECT_EQ(hasher.hex_digest(), hash(text));
}

}  // namespace
}  // namespace et::wire
