// Corrupt and truncated programs are refused, and whatever still loads runs without
// a crash: real fixtures cut at every length and with bytes flipped one at a time.
// Run under ASan+UBSan in CI, so an out-of-bounds read fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/program.h"
#include "runtime/core/pte_header.h"
#include "tests/support/exercise.h"

namespace et {
namespace {

std::vector<uint8_t> read_fixture(const std::string& name) {
  std::ifstream in(std::string(ET_FIXTURES_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Small programs covering planned and unplanned memory, constants in segments,
// several methods, mutable buffers, dynamic shapes, delegate payloads and scalars.
const char* const kPrograms[] = {
    "add.pte",
    "mlp.pte",
    "two_methods.pte",
    "mutable_buffer.pte",
    "dynamic_batch.pte",
    "scalars.pte",
    "mlp_xnnpack.pte",
    "dict_output.pte",
    "add_unplanned_io.pte",
    "zoo_sym_size.pte",
    "zoo_cat.pte",
    "inplace_input.pte",
};

// Lengths a file must have to be whole: the program part, and the segment data.
size_t needed_bytes(const std::vector<uint8_t>& file) {
  auto h = parse_pte_header(file);
  if (!h.ok()) return file.size();
  if (h->segment_base_offset == 0) return h->program_size;
  return h->segment_base_offset + h->segment_data_size;
}

class Corruption : public ::testing::TestWithParam<const char*> {};

TEST_P(Corruption, EveryTruncationIsRefused) {
  const std::vector<uint8_t> file = read_fixture(GetParam());
  ASSERT_FALSE(file.empty());
  const size_t needed = needed_bytes(file);
  ASSERT_LE(needed, file.size());
  // Every length through the program part; then through segment data in steps, and
  // each side of every segment boundary.
  auto header = parse_pte_header(file);
  ASSERT_TRUE(header.ok());
  // Without segments the flatbuffer may end in alignment padding (at most 7 bytes),
  // which a reader need not have.
  const size_t slack = header->segment_base_offset == 0 ? 7 : 0;
  std::set<size_t> cuts;
  for (size_t n = 0; n + slack < std::min(needed, size_t{header->program_size}); ++n)
    cuts.insert(n);
  for (size_t n = header->program_size; n < needed; n += 61) cuts.insert(n);
  if (needed > slack + 1) cuts.insert(needed - slack - 1);
  for (size_t n : cuts) {
    auto p = Program::load(ProgramBytes::copy_of({file.data(), n}));
    ASSERT_FALSE(p.ok()) << GetParam() << " cut to " << n << " of " << needed << " bytes loaded";
  }
}

TEST_P(Corruption, FlippedBytesAreRefusedOrRunSafely) {
  const std::vector<uint8_t> file = read_fixture(GetParam());
  auto header = parse_pte_header(file);
  ASSERT_TRUE(header.ok());
  int refused = 0, loaded = 0;
  std::vector<uint8_t> mutated = file;
  for (size_t i = 0; i < header->program_size; ++i) {
    for (uint8_t mask : {uint8_t{0xff}, uint8_t{0x01}, uint8_t{0x80}}) {
      mutated[i] ^= mask;
      const auto result = testing::exercise_program(mutated);
      (result.program_loaded ? loaded : refused) += 1;
      mutated[i] = file[i];
    }
  }
  // Most single-byte corruptions of the flatbuffer must be caught at load.
  EXPECT_GT(refused, 0) << GetParam();
  RecordProperty("refused", refused);
  RecordProperty("loaded", loaded);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Corruption, ::testing::ValuesIn(kPrograms),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           name = name.substr(0, name.find('.'));
                           std::replace(name.begin(), name.end(), '_', 'X');
                           return name;
                         });

// A bundled program: its own container and test values around the program. Every
// truncation is refused; every flipped byte is refused or runs safely, test cases
// included (exercise_program runs and compares them).
TEST(Corruption, BundledProgramTruncatedOrFlipped) {
  const std::vector<uint8_t> file = read_fixture("mlp_bundled_wrong.bpte");
  ASSERT_FALSE(file.empty());
  ASSERT_TRUE(testing::exercise_program(file).program_loaded);
  for (size_t n = 0; n < file.size(); ++n) {
    ASSERT_FALSE(Program::load(ProgramBytes::copy_of({file.data(), n})).ok()) << "cut to " << n;
  }
  int refused = 0;
  std::vector<uint8_t> mutated = file;
  for (size_t i = 0; i < file.size(); ++i) {
    for (uint8_t mask : {uint8_t{0xff}, uint8_t{0x01}}) {
      mutated[i] ^= mask;
      refused += !testing::exercise_program(mutated).program_loaded;
      mutated[i] = file[i];
    }
  }
  EXPECT_GT(refused, 0);
}

// Inputs that once crashed the loader or a sanitizer (from the fuzzer, or corruption
// tests), kept so the bug stays fixed. Each must run through without a crash.
TEST(Corruption, FuzzRegressionsRunSafely) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ET_FUZZ_REGRESSIONS_DIR)) {
    if (entry.path().extension() == ".md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>()};
    testing::exercise_program(bytes);
    ++files;
  }
  EXPECT_GE(files, 2);
}

TEST(Corruption, UntouchedFixturesLoadAndRun) {
  for (const char* name : kPrograms) {
    const auto result = testing::exercise_program(read_fixture(name));
    EXPECT_TRUE(result.program_loaded) << name;
  }
}

}  // namespace
}  // namespace et
