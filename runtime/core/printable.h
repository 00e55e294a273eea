// Text from clients or files (method names, delegate ids, keys, file identifiers,
// client names, error messages that quote them) made safe to write into messages and
// the daemon's log: a hostile program must not forge log lines or terminal escapes.
#pragma once

#include <string>
#include <string_view>

namespace et {

// `text` with every byte outside printable ASCII (and the backslash) written as \xNN.
inline std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

}  // namespace et
