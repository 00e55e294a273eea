#include "port/realtime.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace et {
namespace {

TEST(RealtimeClass, ParsesPolicyAndPriority) {
  RealtimeClass rt;
  EXPECT_EQ(parse_realtime_class("fifo:20", rt), "");
  EXPECT_EQ(rt.policy, SCHED_FIFO);
  EXPECT_EQ(rt.priority, 20);
  EXPECT_EQ(parse_realtime_class("rr", rt), "");
  EXPECT_EQ(rt.policy, SCHED_RR);
  EXPECT_EQ(rt.priority, 10);
  EXPECT_EQ(rt.describe(), "SCHED_RR priority 10");
  EXPECT_EQ(parse_realtime_class("off", rt), "");
  EXPECT_FALSE(rt.on());
  EXPECT_EQ(rt.describe(), "off");
}

TEST(RealtimeClass, RefusesWhatIsNotAClass) {
  RealtimeClass rt;
  EXPECT_NE(parse_realtime_class("deadline:5", rt).find("give fifo[:PRIORITY]"), std::string::npos);
  EXPECT_NE(parse_realtime_class("fifo:0", rt).find("from 1 to 99"), std::string::npos);
  EXPECT_NE(parse_realtime_class("fifo:100", rt).find("from 1 to 99"), std::string::npos);
  EXPECT_NE(parse_realtime_class("fifo:1x", rt).find("from 1 to 99"), std::string::npos);
  EXPECT_FALSE(rt.on());  // unchanged by a refusal
}

TEST(RealtimeClass, CpuListsAreCheckedAgainstTheAllowedCpus) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c) {
    if (CPU_ISSET(c, &set)) first = c;
  }
  std::vector<int> cpus;
  EXPECT_EQ(parse_cpu_list(std::to_string(first), cpus), "");
  EXPECT_EQ(cpus, std::vector<int>{first});
  EXPECT_NE(parse_cpu_list("1023", cpus).find("CPU 1023 is not in this process's allowed CPUs"),
            std::string::npos);
  EXPECT_NE(parse_cpu_list("3-1", cpus).find("not a CPU or a range"), std::string::npos);
  EXPECT_NE(parse_cpu_list("a", cpus).find("not a CPU or a range"), std::string::npos);
  EXPECT_EQ(cpus, std::vector<int>{first});  // unchanged by a refusal
  RealtimeClass rt;
  ASSERT_EQ(parse_realtime_class("fifo:5", rt), "");
  rt.cpus = {0, 1, 2, 5};
  EXPECT_EQ(rt.describe(), "SCHED_FIFO priority 5 on CPUs 0-2,5");
}

TEST(RealtimeClass, ARefusalNamesWhatAllowsIt) {
  RealtimeClass rt;
  ASSERT_EQ(parse_realtime_class("fifo:12", rt), "");
  const std::string why = realtime_refusal(rt, EPERM);
  for (const char* words : {"SCHED_FIFO priority 12", "RLIMIT_RTPRIO", "CAP_SYS_NICE",
                            "ulimit -r 12", "LimitRTPRIO=12", "--ulimit rtprio=12"}) {
    EXPECT_NE(why.find(words), std::string::npos) << words << " not in: " << why;
  }
}

TEST(RealtimeClass, AThreadIsRealtimeOnlyOnceItEnteredTheClass) {
  bool before = true, after_off = true;
  int error = -1;
  std::thread([&] {
    before = this_thread_is_realtime();
    error = enter_realtime_class(RealtimeClass{});  // "off": back to SCHED_OTHER
    after_off = this_thread_is_realtime();
  }).join();
  EXPECT_FALSE(before);
  EXPECT_EQ(error, 0);
  EXPECT_FALSE(after_off);
}

TEST(RealtimeClass, APinnedThreadKnowsItsCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c) {
    if (CPU_ISSET(c, &allowed)) first = c;
  }
  int pinned = -3, unpinned = -3;
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    pinned = this_thread_pinned_cpu();
  }).join();
  EXPECT_EQ(pinned, first);
  std::thread([&] { unpinned = this_thread_pinned_cpu(); }).join();
  EXPECT_EQ(unpinned, CPU_COUNT(&allowed) == 1 ? first : -1);
}

TEST(RealtimeClass, PollsOnlyBesideACounterpartPinnedElsewhere) {
  EXPECT_TRUE(realtime_polls_beside(0, 2));    // CPU 0 beside CPU 1
  EXPECT_FALSE(realtime_polls_beside(1, 2));   // both on CPU 1
  EXPECT_FALSE(realtime_polls_beside(0, 0));   // the counterpart is not pinned
  EXPECT_FALSE(realtime_polls_beside(-1, 2));  // this thread is not pinned
}

}  // namespace
}  // namespace et
