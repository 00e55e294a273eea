// --vet (server/core/vetting/vetting.h): the sandboxed child runs real programs under its filter,
// and whatever kills or stalls it becomes a refusal naming why, never a crash of the
// caller. Stand-ins for a crashing program are scripts run in the child's place.
#include "server/core/vetting/vetting.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/testing/fixtures.h"

namespace et::server {
namespace {

using ::et::testing::fixture_path;

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A script that stands in for et-serverd --vet-child.
std::string script(const std::string& name, const std::string& body) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0700);
  return path;
}

TEST(Vetting, RealProgramsRunInTheSandbox) {
  Vetter vetter(ET_SERVERD_PATH, VetLimits{});
  for (const char* name : {"add.pte", "mobilenet_v2_xnnpack.pte", "llama_decode.pte"}) {
    const auto bytes = read_bytes(fixture_path(name));
    ASSERT_FALSE(bytes.empty()) << name;
    EXPECT_TRUE(vetter.vet(bytes, {}, name).ok()) << name;
  }
}

TEST(Vetting, TheChildReportsItsFilterHolds) {
  // The child's own report, read directly: the filter refuses opening files, and the
  // method ran under it.
  const int program = open(fixture_path("add.pte").c_str(), O_RDONLY);
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(program, 3);
    dup2(report[1], 5);
    execl(ET_SERVERD_PATH, ET_SERVERD_PATH, "--vet-child", "8589934592", "60000", "100000000",
          "none", nullptr);
    _exit(127);
  }
  close(report[1]);
  std::string text;
  char chunk[512];
  for (ssize_t n; (n = read(report[0], chunk, sizeof(chunk))) > 0;) text.append(chunk, n);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_NE(text.find("sandbox: opening files refused"), std::string::npos) << text;
  EXPECT_NE(text.find("method forward: ran"), std::string::npos) << text;
  EXPECT_NE(text.find("done"), std::string::npos) << text;
}

TEST(Vetting, ACrashIsARefusalNamingTheSignalAndIsRemembered) {
  Vetter vetter(script("segv.sh", "kill -SEGV $$"), VetLimits{});
  const std::vector<uint8_t> bytes = {1, 2, 3};
  Status s = vetter.vet(bytes, {}, "hash-a");
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(s.message().find("killed by SIGSEGV"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--vet"), std::string::npos) << s.message();
  s = vetter.vet(bytes, {}, "hash-a");
  EXPECT_NE(s.message().find("crashed the sandboxed process it was tried in before"),
            std::string::npos)
      << s.message();
}

// The log line of a refusal carries what the child said as it died (a sanitizer's
// report, the runtime's last words), which would otherwise be lost.
TEST(Vetting, ARefusalsLogLineQuotesTheChildsStderr) {
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "vetting-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out)));
  Vetter vetter(script("says-and-dies.sh",
                       "echo 'AddressSanitizer: the first line' >&2\n"
                       "echo 'the cause' >&2\n"
                       "kill -SEGV $$"),
                VetLimits{});
  const std::vector<uint8_t> bytes = {1, 2};
  Status s = vetter.vet(bytes, {}, "hash-e");
  spdlog::set_default_logger(previous);
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(out.str().find("killed by SIGSEGV"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("the child's stderr: AddressSanitizer: the first line|the cause"),
            std::string::npos)
      << out.str();
}

TEST(Vetting, AChildThatNeverEndsIsKilledOnTime) {
  VetLimits limits;
  limits.execution_deadline = std::chrono::milliseconds(100);
  limits.load_allowance = std::chrono::milliseconds(300);
  Vetter vetter(script("hang.sh", "exec sleep 1000"), limits);
  const std::vector<uint8_t> bytes = {1};
  Status s = vetter.vet(bytes, {}, "hash-b");  // it returns: the child was killed
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(s.message().find("made no progress for 0.4 s"), std::string::npos) << s.message();
}

TEST(Vetting, AChildThatClosesItsReportAndHangsIsKilledOnTime) {
  VetLimits limits;
  limits.execution_deadline = std::chrono::milliseconds(100);
  limits.load_allowance = std::chrono::milliseconds(300);
  Vetter vetter(script("close-and-hang.sh", "exec 5>&-; exec sleep 1000"), limits);
  const std::vector<uint8_t> bytes = {1};
  Status s = vetter.vet(bytes, {}, "hash-d");  // it returns: the child was killed
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(s.message().find("made no progress"), std::string::npos) << s.message();
}

TEST(Vetting, ASandboxThatCannotBeSetUpIsNotTheProgramsFault) {
  Vetter vetter(script("no-sandbox.sh", "echo 'seccomp: not here' >&5; exit 3"), VetLimits{});
  const std::vector<uint8_t> bytes = {1};
  Status s = vetter.vet(bytes, {}, "hash-e");
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("seccomp: not here"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--vet off"), std::string::npos) << s.message();
}

TEST(Vetting, AChildThatExitsWithoutFinishingIsARefusal) {
  Vetter vetter(script("quit.sh", "echo 'method forward: ran' >&5; exit 0"), VetLimits{});
  const std::vector<uint8_t> bytes = {1};
  Status s = vetter.vet(bytes, {}, "hash-c");
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(s.message().find("ended without finishing"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace et::server
