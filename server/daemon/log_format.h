// The daemon's log lines: text (a timestamp, the level, the message) or, with
// --log-format json, one JSON object per line (docs/operations.md):
//   {"time":"2026-12-03T04:05:06.789Z","level":"info","message":"...","session":3,"call":41}
// "session" and "call" are present on lines logged while a call is served.
#pragma once

#include <string_view>

namespace et::server {

// Sets the format of every logger. REQUIRES: `format` is "text" or "json".
void set_log_format(std::string_view format);

}  // namespace et::server
