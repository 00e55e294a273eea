// Every exported fixture program passes the runtime's container checks, and every
// bundled program is recognised as such: real files from the real exporter.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "runtime/core/program.h"
#include "runtime/core/pte_header.h"

namespace et {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<fs::path> fixtures_with_extension(const char* extension) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(ET_FIXTURES_DIR)) {
    if (entry.path().extension() == extension) out.push_back(entry.path());
  }
  return out;
}

TEST(FixturePrograms, EveryPteHasAValidContainer) {
  auto programs = fixtures_with_extension(".pte");
  // The fixture set has well over a hundred programs; a handful means a broken checkout.
  ASSERT_GE(programs.size(), 100u) << "fixtures missing from " << ET_FIXTURES_DIR;
  size_t with_segments = 0;
  for (const auto& path : programs) {
    auto bytes = read_file(path);
    auto header = parse_pte_header(bytes);
    ASSERT_TRUE(header.ok()) << path << ": " << header.status().to_string();
    if (header->segment_base_offset != 0) ++with_segments;
  }
  // Programs with weights keep their constants in segments.
  EXPECT_GT(with_segments, 0u);
}

TEST(FixturePrograms, BundledProgramsLoadAsTheirProgram) {
  auto bundled = fixtures_with_extension(".bpte");
  ASSERT_FALSE(bundled.empty());
  for (const auto& path : bundled) {
    // The container parser alone refuses them; Program::load unwraps them.
    auto header = parse_pte_header(read_file(path));
    ASSERT_FALSE(header.ok()) << path;
    EXPECT_NE(header.status().message().find("bundled"), std::string::npos)
        << header.status().message();
    auto program = Program::load_file(path);
    ASSERT_TRUE(program.ok()) << path << ": " << program.status().to_string();
    ASSERT_NE((*program)->bundled_tests(), nullptr) << path;
    EXPECT_GT((*program)->bundled_tests()->num_cases(), 0u) << path;
  }
}

}  // namespace
}  // namespace et
