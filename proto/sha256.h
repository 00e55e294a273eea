// SHA-256 (FIPS 180-4), for naming programs by their content.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace etserver {

// Lower-case hex digest of `bytes` (64 characters).
std::string sha256_hex(std::span<const uint8_t> bytes);

}  // namespace etserver
