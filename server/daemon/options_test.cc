#include "server/daemon/options.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <map>
#include <string>
#include <vector>

namespace et::server {
namespace {

Result<Options> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "et-serverd");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

TEST(Options, FlagsSetTheirOptions) {
  auto o = parse({"--socket", "/tmp/x.sock", "--workers", "3", "--no-fast-path",
                  "--max-fast-channels", "7", "--request-deadline-ms", "250", "--vet", "off"});
  ASSERT_TRUE(o.ok()) << o.status().to_string();
  EXPECT_EQ(o->socket, "/tmp/x.sock");
  EXPECT_EQ(o->limits.max_concurrent_runs, 3u);
  EXPECT_FALSE(o->fast_path.enabled);
  EXPECT_EQ(o->fast_path.max_channels, 7u);
  EXPECT_EQ(o->limits.request_deadline.count(), 250);
  EXPECT_FALSE(o->limits.vet);
}

TEST(Options, LockedMemoryIsAlsoWrittenAtLoad) {
  auto plain = parse({});
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_FALSE(plain->rt_mlock);
  EXPECT_FALSE(plain->limits.prefault_method_memory);
  auto locked = parse({"--rt-mlock"});
  ASSERT_TRUE(locked.ok()) << locked.status().to_string();
  EXPECT_TRUE(locked->rt_mlock);
  EXPECT_TRUE(locked->limits.prefault_method_memory);
}

TEST(Options, CheckTakesAnAddressOrNone) {
  auto bare = parse({"--check", "--socket", "/tmp/y.sock"});
  ASSERT_TRUE(bare.ok()) << bare.status().to_string();
  EXPECT_TRUE(bare->check);
  EXPECT_EQ(bare->check_address, "");
  EXPECT_EQ(bare->socket, "/tmp/y.sock");
  auto given = parse({"--check", "unix:/tmp/z.sock"});
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->check_address, "unix:/tmp/z.sock");
  EXPECT_TRUE(parse({"-h"})->help);
}

TEST(Options, ErrorsNameTheFlag) {
  EXPECT_EQ(parse({"--bogus"}).status().message(), "unknown flag --bogus (see --help)");
  EXPECT_EQ(parse({"--threads"}).status().message(), "--threads needs a value (see --help)");
  EXPECT_EQ(parse({"--threads", "x"}).status().message(),
            "--threads: 'x' is not a non-negative integer");
  EXPECT_EQ(parse({"--vet", "maybe"}).status().message(), "--vet: give on or off");
  EXPECT_NE(parse({"--keepalive-timeout-ms", "5"}).status().message().find("at least 6000"),
            std::string::npos);
}

// --help is made from the table the parser reads: every flag it lists is one the parser
// takes (with a value when the help shows one).
TEST(Options, EveryFlagInTheHelpIsParsed) {
  const std::string help = usage();
  size_t flags = 0;
  for (size_t at = help.find("\n  --"); at != std::string::npos; at = help.find("\n  --", at + 1)) {
    const size_t end = help.find_first_of(" \n", at + 3);
    const std::string name = help.substr(at + 3, end - at - 3);
    const bool takes_value = help[end] == ' ' && help[end + 1] != ' ';
    // Values each flag accepts (else a count).
    static const std::map<std::string, std::string> kValues = {
        {"--socket-group", "0"},
        {"--kserve-tcp-shared-memory", "on"},
        {"--vet", "on"},
        {"--warm-up", "on"},
        {"--log-level", "info"},
        {"--log-format", "json"},
        {"--model-control-mode", "none"},
        {"--keepalive-timeout-ms", "6000"},
        {"--listen", "127.0.0.1:1"},
        {"--rt", "fifo:10"},
    };
    // Valid only with other flags (checked after parsing).
    if (name == "--tls-client-ca" || name == "--tls-cert" || name == "--tls-key" ||
        name == "--load-model" || name == "--rt-cpus") {
      continue;
    }
    std::vector<std::string> args{name};
    if (takes_value) args.push_back(kValues.count(name) ? kValues.at(name) : "1");
    auto o = parse(args);
    EXPECT_TRUE(o.ok()) << name << ": " << o.status().to_string();
    ++flags;
  }
  EXPECT_GT(flags, 40u);
}

TEST(Options, RealtimeCpusGoWithAClassAndMustBeAllowed) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &set)) ++cpu;
  auto o = parse({"--rt", "rr:7", "--rt-cpus", std::to_string(cpu)});
  ASSERT_TRUE(o.ok()) << o.status().to_string();
  EXPECT_EQ(o->realtime.policy, SCHED_RR);
  EXPECT_EQ(o->realtime.priority, 7);
  EXPECT_EQ(o->realtime.cpus, std::vector<int>{cpu});
  auto alone = parse({"--rt-cpus", std::to_string(cpu)});
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("--rt-cpus goes with --rt"), std::string::npos);
  auto outside = parse({"--rt", "fifo", "--rt-cpus", "1000"});
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("CPU 1000 is not in this process's allowed CPUs"),
            std::string::npos)
      << outside.status().to_string();
}

}  // namespace
}  // namespace et::server
