#include "server/daemon/log_format.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/formatter.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>

#include "server/common/utf8.h"
#include "server/metrics/call_scope.h"

namespace et::server {
namespace {

void append_json_string(spdlog::memory_buf_t& out, std::string_view text) {
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      // Not UTF-8 (a message quoting raw bytes): the byte as the text \xNN, so the
      // line stays valid JSON and says what the byte was.
      fmt::format_to(std::back_inserter(out), "\\\\x{:02x}", byte);
    } else if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (byte < 0x20 || byte == 0x7f) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", byte);
    } else {
      out.append(text.substr(i, n));
    }
    i += n == 0 ? 1 : n;
  }
  out.push_back('"');
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since_epoch = msg.time.time_since_epoch();
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - secs);
    const std::time_t t = static_cast<std::time_t>(secs.count());
    fmt::format_to(std::back_inserter(dest), R"({{"time":"{:%Y-%m-%dT%H:%M:%S}.{:03}Z","level":)",
                   fmt::gmtime(t), millis.count());
    const auto level = spdlog::level::to_string_view(msg.level);
    append_json_string(dest, std::string_view(level.data(), level.size()));
    dest.append(std::string_view(R"(,"message":)"));
    append_json_string(dest, std::string_view(msg.payload.data(), msg.payload.size()));
    if (const uint64_t session = metrics::CallScope::current_session()) {
      fmt::format_to(std::back_inserter(dest), R"(,"session":{})", session);
    }
    if (const uint64_t call = metrics::CallScope::current_call()) {
      fmt::format_to(std::back_inserter(dest), R"(,"call":{})", call);
    }
    dest.append(std::string_view("}\n"));
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

void set_log_format(std::string_view format) {
  if (format == "json") {
    spdlog::set_formatter(std::make_unique<JsonFormatter>());
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
}

}  // namespace et::server
