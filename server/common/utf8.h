// UTF-8 for text that must be valid UTF-8 where it goes (Prometheus label values, JSON
// log lines) but may come from clients or file names (any bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace et::server {

// The length (1 to 4) of the valid UTF-8 sequence that starts at text[i], or 0 when the
// bytes there are not one (a stray continuation byte, a truncated sequence, an overlong
// form, a surrogate, a value past U+10FFFF). REQUIRES: i < text.size().
inline size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = at(i);
  if (lead < 0x80) return 1;
  size_t n = 0;
  uint32_t min = 0, value = 0;
  if ((lead & 0xe0) == 0xc0) {
    n = 2, min = 0x80, value = lead & 0x1f;
  } else if ((lead & 0xf0) == 0xe0) {
    n = 3, min = 0x800, value = lead & 0x0f;
  } else if ((lead & 0xf8) == 0xf0) {
    n = 4, min = 0x10000, value = lead & 0x07;
  } else {
    return 0;
  }
  if (text.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((at(i + k) & 0xc0) != 0x80) return 0;
    value = (value << 6) | (at(i + k) & 0x3f);
  }
  if (value < min || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return 0;
  return n;
}

}  // namespace et::server
