#include "runtime/devtools/chrome_trace.h"

#include <fmt/format.h>

#include <iterator>

namespace et {
namespace {

// `s` as a JSON string literal.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        // Control characters, and every byte above ASCII (a program's names need not be
        // UTF-8; JSON must be): escaped one byte per character.
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x80) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

std::string chrome_trace_json(const std::vector<ExecuteProfile>& profiles) {
  const int64_t origin = profiles.empty() ? 0 : profiles.front().start_ns;
  auto us = [origin](int64_t ns) { return static_cast<double>(ns - origin) / 1e3; };
  std::string out = R"({"displayTimeUnit": "ms", "traceEvents": [)";
  out += R"({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "et-serverd runtime"}})";
  for (size_t n = 0; n < profiles.size(); ++n) {
    const ExecuteProfile& p = profiles[n];
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"name\": {}, \"cat\": \"execute\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, "
        "\"ts\": {:.3f}, \"dur\": {:.3f}, \"args\": {{\"execute\": {}}}}}",
        quoted("execute " + p.method), us(p.start_ns),
        static_cast<double>(p.end_ns - p.start_ns) / 1e3, n);
    for (const ProfileEvent& e : p.events) {
      std::string args = fmt::format(R"("chain": {}, "instruction": {})", e.chain, e.instruction);
      if (!e.args.empty()) args += fmt::format(", \"args\": {}", quoted(e.args));
      if (e.debug_id >= 0) args += fmt::format(", \"debug_id\": {}", e.debug_id);
      fmt::format_to(std::back_inserter(out),
                     ",\n{{\"name\": {}, \"cat\": \"{}\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, "
                     "\"ts\": {:.3f}, \"dur\": {:.3f}, \"args\": {{{}}}}}",
                     quoted(e.name), profile_event_kind_name(e.kind), us(e.start_ns),
                     static_cast<double>(e.end_ns - e.start_ns) / 1e3, args);
    }
  }
  return out + "]}\n";
}

}  // namespace et
