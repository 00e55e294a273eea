#include "server/core/shared_programs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <latch>
#include <thread>
#include <vector>

#include "proto/sha256.h"
#include "tests/support/eventually.h"

namespace et::server {
namespace {

using ::et::testing::kBackstop;

std::vector<uint8_t> fixture(const std::string& name) {
  std::ifstream in(std::string(ET_FIXTURES_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(SharedPrograms, SessionsSendingOneProgramAtOnceCostOneParse) {
  const std::vector<uint8_t> bytes = fixture("mobilenet_v2_xnnpack.pte");
  ASSERT_GT(bytes.size(), 1000000u);
  // Rounds of sessions released at one instant (as many as this machine runs at once,
  // so they hash side by side and miss the registry together).
  const int sessions = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  for (int round = 0; round < 5; ++round) {
    SharedPrograms registry;
    std::vector<std::shared_ptr<const SharedProgram>> got(sessions);
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

TEST(SharedPrograms, AFailedLoadLetsTheWaitersTryThemselves) {
  std::vector<uint8_t> bytes = fixture("add.pte");
  bytes.resize(bytes.size() / 2);  // not a program
  SharedPrograms registry;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] { EXPECT_FALSE(registry.add(bytes, "").ok()); });
  }
  for (auto& t : threads) t.join();
  EXPECT_GE(registry.parsed(), 1u);
  EXPECT_EQ(registry.size(), 0u);
}

TEST(SharedPrograms, SessionsAskingByHashWaitForTheOneSendingTheBytes) {
  const std::vector<uint8_t> bytes = fixture("add.pte");
  SharedPrograms registry;
  const std::string sha = ::et::wire::sha256_hex(bytes);
  // Session 1 asks first: it is told to send the bytes (its claim outlasts any slow
  // machine, so that session 2 below never finds it run out).
  EXPECT_EQ(registry.find_or_await_upload(sha, "", 1, "", kBackstop), nullptr);
  // Session 2 asks meanwhile: it waits for session 1's upload and gets its program.
  // (The sleep only makes it most often already waiting; asking after the upload, it
  // finds the program all the same.)
  std::shared_ptr<const SharedProgram> waited;
  std::thread second([&] { waited = registry.find_or_await_upload(sha, "", 2, "", kBackstop); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto added = registry.add(bytes, sha, {}, {}, "ipv4:10.0.0.7");
  ASSERT_TRUE(added.ok());
  second.join();
  ASSERT_EQ(waited, added->first);
  // Noted before the waiter could see it: a waiter checking who sent it must not find
  // the program without its sender (and answer "send it" again).
  EXPECT_TRUE(waited->uploaded_by("ipv4:10.0.0.7"));
  EXPECT_EQ(registry.parsed(), 1u);
}

TEST(SharedPrograms, AnUploadThatNeverComesStopsTheWaitAtItsDeadline) {
  SharedPrograms registry;
  const std::string sha(64, 'a');
  EXPECT_EQ(registry.find_or_await_upload(sha, "", 1, "", std::chrono::milliseconds(100)), nullptr);
  // Session 2 waits out session 1's window, then is the one told to send.
  EXPECT_EQ(registry.find_or_await_upload(sha, "", 2, "", std::chrono::milliseconds(100)), nullptr);
  // And now session 1 waits for session 2 (its window), likewise bounded.
  EXPECT_EQ(registry.find_or_await_upload(sha, "", 1, "", std::chrono::milliseconds(100)), nullptr);
}

TEST(SharedPrograms, AReleasedProgramStaysLoadedForTheNextSession) {
  const std::vector<uint8_t> bytes = fixture("add.pte");
  const std::string sha = ::et::wire::sha256_hex(bytes);
  SharedPrograms registry;
  registry.set_keep_warm(std::chrono::seconds(60), uint64_t{1} << 30);
  {
    auto added = registry.add(bytes, sha);
    ASSERT_TRUE(added.ok());
    registry.keep_warm(added->first);  // its session closed
  }
  EXPECT_NE(registry.find(sha), nullptr) << "the next session would send and parse it again";
  EXPECT_EQ(registry.parsed(), 1u);
}

TEST(SharedPrograms, KeptProgramsGoWhenTheirTimeIsUpOrTheBytesRunOut) {
  const std::vector<uint8_t> add = fixture("add.pte"), mlp = fixture("mlp.pte");
  SharedPrograms registry;
  // Room for the larger program alone: keeping the second lets the first go.
  registry.set_keep_warm(std::chrono::milliseconds(50), std::max(add.size(), mlp.size()));
  for (const auto* bytes : {&add, &mlp}) {
    auto added = registry.add(*bytes, "");
    ASSERT_TRUE(added.ok());
    registry.keep_warm(added->first);
  }
  EXPECT_EQ(registry.find(::et::wire::sha256_hex(add)), nullptr);
  EXPECT_NE(registry.find(::et::wire::sha256_hex(mlp)), nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // at least: past the 50 ms
  registry.drop_expired();
  EXPECT_EQ(registry.find(::et::wire::sha256_hex(mlp)), nullptr);
  // Keeping off (0 s): a released program goes at once.
  registry.set_keep_warm(std::chrono::seconds(0), uint64_t{1} << 30);
  auto added = registry.add(add, "");
  ASSERT_TRUE(added.ok());
  registry.keep_warm(added->first);
  added = Status();  // the session's reference is gone
  EXPECT_EQ(registry.find(::et::wire::sha256_hex(add)), nullptr);
}

// The waits below tell "ended by what the test did" from "ran out": a claim or a
// waiter's own limit of kBackstop runs out after kBackstop, and whatever ends a wait
// sooner does so long before half of it, however slow the machine.
constexpr auto kSooner = std::chrono::duration_cast<std::chrono::milliseconds>(kBackstop) / 2;

TEST(SharedPrograms, WhenTheSenderGoesTheWaitersStopWaiting) {
  SharedPrograms registry;
  const std::string sha(64, 'b');
  EXPECT_EQ(registry.find_or_await_upload(sha, "", 1, "", kBackstop), nullptr);
  const auto start = std::chrono::steady_clock::now();
  // The sleep makes session 2 most often waiting already; one not yet waiting finds no
  // claim and ends at once all the same.
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    registry.forget_asker(1);  // session 1 closed without sending
  });
  EXPECT_EQ(registry.find_or_await_upload(sha, "", 2, "", kBackstop), nullptr);
  closer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, kSooner) << "it waited out the claim";
}

// How long find_or_await_upload(`asker`, `peer`, waiting at most kBackstop) took to
// give up while `meanwhile(waiter_done)` ran on this thread (session 1 holds the claim,
// on `claim_peer`, for `claim`).
std::chrono::milliseconds waited_for(
    SharedPrograms& registry, const std::string& claim_peer, std::chrono::milliseconds claim,
    const std::string& peer, const std::function<void(const std::atomic<bool>&)>& meanwhile) {
  const std::string sha(64, 'c');
  EXPECT_EQ(registry.find_or_await_upload(sha, "", 1, claim_peer, claim), nullptr);
  const auto start = std::chrono::steady_clock::now();
  std::chrono::milliseconds took{};
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    EXPECT_EQ(registry.find_or_await_upload(sha, "", 2, peer, kBackstop), nullptr);
    took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
    done = true;
  });
  meanwhile(done);
  waiter.join();
  return took;
}

TEST(SharedPrograms, TheSenderAskingAgainDoesNotExtendTheWait) {
  SharedPrograms registry;
  const auto took = waited_for(
      registry, "", std::chrono::milliseconds(200), "", [&](const std::atomic<bool>& done) {
        // Session 1 asks again and again until session 2 stops waiting: were each ask
        // to renew its 200 ms claim, session 2 would wait out its own kBackstop. (Once
        // the claim passes to session 2, each ask waits for that one up to its 200 ms.)
        while (!done) {
          EXPECT_EQ(registry.find_or_await_upload(std::string(64, 'c'), "", 1, "",
                                                  std::chrono::milliseconds(200)),
                    nullptr);
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      });
  EXPECT_LT(took, kSooner) << "the claim was renewed by re-asking";
}

TEST(SharedPrograms, OnlySessionsOfOnePeerWaitForEachOther) {
  SharedPrograms registry;
  const auto took =
      waited_for(registry, "ipv4:10.0.0.7", kBackstop, "", [](const std::atomic<bool>&) {});
  EXPECT_LT(took, kSooner) << "a local session waited for a remote sender";
}

TEST(SharedPrograms, AStoppingDaemonOrARefusedUploadEndsTheWait) {
  // The sleeps make the waiter most often waiting already; one not yet waiting ends at
  // once all the same.
  SharedPrograms stopping;
  EXPECT_LT(waited_for(stopping, "", kBackstop, "",
                       [&](const std::atomic<bool>&) {
                         std::this_thread::sleep_for(std::chrono::milliseconds(50));
                         stopping.stop_waiting();
                       }),
            kSooner);
  SharedPrograms refused;
  EXPECT_LT(waited_for(refused, "", kBackstop, "",
                       [&](const std::atomic<bool>&) {
                         std::this_thread::sleep_for(std::chrono::milliseconds(50));
                         refused.release_claim(std::string(64, 'c'), "", 1);
                       }),
            kSooner);
}

TEST(SharedPrograms, BytesThatAreNotWhatTheCallerSaysAreRefusedEvenWhenLoaded) {
  const std::vector<uint8_t> bytes = fixture("add.pte");
  SharedPrograms registry;
  auto first = registry.add(bytes, "");
  ASSERT_TRUE(first.ok());
  auto wrong = registry.add(bytes, std::string(64, 'e'));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().to_string().find("hash to"), std::string::npos)
      << wrong.status().to_string();
  auto no_data = registry.add(bytes, "", {}, std::string(64, 'd'));
  EXPECT_FALSE(no_data.ok()) << "a data file was named but none sent";
}

}  // namespace
}  // namespace et::server
