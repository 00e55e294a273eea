// SHA-256 (FIPS 180-4), for naming programs by their content: OpenSSL's libcrypto (its
// SHA-NI and AVX2 code), never a hash of our own.
//
// Thread-safety: sha256_hex() from any thread; a Sha256 is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace et::wire {

// Lower-case hex digest of `bytes` (64 characters).
std::string sha256_hex(std::span<const uint8_t> bytes);

// The same digest over bytes that arrive in pieces (a file read in chunks).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::span<const uint8_t> bytes);
  // The digest of everything updated so far; the hasher is spent after it.
  std::string hex_digest();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace et::wire
