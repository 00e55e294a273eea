#include "server/program_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <latch>
#include <thread>
#include <vector>

namespace et::server {
namespace {

std::vector<uint8_t> fixture(const std::string& name) {
  std::ifstream in(std::string(ET_FIXTURES_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ProgramRegistry, SessionsSendingOneProgramAtOnceCostOneParse) {
  const std::vector<uint8_t> bytes = fixture("mobilenet_v2_xnnpack.pte");
  ASSERT_GT(bytes.size(), 1000000u);
  // Rounds of sessions released at one instant (as many as this machine runs at once,
  // so they hash side by side and miss the registry together).
  const int sessions = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  for (int round = 0; round < 5; ++round) {
    ProgramRegistry registry;
    std::vector<std::shared_ptr<const RegisteredProgram>> got(sessions);
    std::vector<int> fresh(sessions, -1);
    std::latch start(sessions);
    std::vector<std::thread> threads;
    for (int i = 0; i < sessions; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        auto added = registry.add(bytes, "");
        ASSERT_TRUE(added.ok()) << added.status().to_string();
        got[i] = added->first;
        fresh[i] = added->second ? 0 : 1;
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(registry.parsed(), 1u) << "round " << round;
    int loaded = 0;
    for (int i = 0; i < sessions; ++i) {
      EXPECT_EQ(got[i], got[0]);
      loaded += fresh[i];
    }
    EXPECT_EQ(loaded, 1);
  }
}

TEST(ProgramRegistry, AFailedLoadLetsTheWaitersTryThemselves) {
  std::vector<uint8_t> bytes = fixture("add.pte");
  bytes.resize(bytes.size() / 2);  // not a program
  ProgramRegistry registry;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] { EXPECT_FALSE(registry.add(bytes, "").ok()); });
  }
  for (auto& t : threads) t.join();
  EXPECT_GE(registry.parsed(), 1u);
  EXPECT_EQ(registry.size(), 0u);
}

}  // namespace
}  // namespace et::server
