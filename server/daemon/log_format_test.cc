// JSON log lines: valid JSON whatever the message holds (quotes, control bytes, UTF-8,
// bytes that are not UTF-8), with the session and call of the call being served.
#include "server/daemon/log_format.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "server/metrics/call_scope.h"

namespace et::server {
namespace {

TEST(JsonLogs, EveryLineIsJsonWithTheCallsIds) {
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>(
      "json-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  spdlog::set_default_logger(logger);
  set_log_format("json");
  spdlog::info("plain");
  {
    metrics::CallScope scope(nullptr, metrics::Transport::kGrpc);
    metrics::CallScope::note_session(7);
    spdlog::warn("q\"uote \\ tab\t nl\n caf\xc3\xa9 raw\xff end");
  }
  set_log_format("text");
  spdlog::set_default_logger(previous);

  std::istringstream lines(out.str());
  std::string line;
  std::vector<nlohmann::json> parsed;
  while (std::getline(lines, line)) parsed.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(parsed.size(), 2u) << out.str();
  EXPECT_EQ(parsed[0]["message"], "plain");
  EXPECT_EQ(parsed[0]["level"], "info");
  EXPECT_FALSE(parsed[0].contains("session"));
  EXPECT_EQ(parsed[1]["message"], "q\"uote \\ tab\t nl\n caf\xc3\xa9 raw\\xff end");
  EXPECT_EQ(parsed[1]["session"], 7);
  EXPECT_GE(parsed[1]["call"].get<uint64_t>(), 1u);
}

}  // namespace
}  // namespace et::server
