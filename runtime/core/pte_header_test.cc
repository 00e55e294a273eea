#include "runtime/core/pte_header.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace et {
namespace {

// Builds the first bytes of a .pte: root offset, identifier, optional extended header.
struct FileBuilder {
  std::vector<uint8_t> bytes;

  explicit FileBuilder(size_t size, std::string_view id = "ET12", uint32_t root = 64)
      : bytes(size, 0) {
    put32(0, root);
    std::memcpy(bytes.data() + 4, id.data(), 4);
  }
  FileBuilder& extended(uint32_t length, uint64_t program_size, uint64_t segment_base,
                        uint64_t segment_size) {
    std::memcpy(bytes.data() + 8, "eh00", 4);
    put32(12, length);
    put64(16, program_size);
    put64(24, segment_base);
    if (length >= 32) put64(32, segment_size);
    return *this;
  }
  void put32(size_t at, uint32_t v) { std::memcpy(bytes.data() + at, &v, 4); }
  void put64(size_t at, uint64_t v) { std::memcpy(bytes.data() + at, &v, 8); }
};

Status status_of_parse(const std::vector<uint8_t>& bytes) {
  return parse_pte_header(bytes).status();
}

TEST(PteHeader, PlainProgram) {
  FileBuilder f(256);
  auto h = parse_pte_header(f.bytes);
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(h->root_offset, 64u);
  EXPECT_FALSE(h->has_extended_header);
  EXPECT_EQ(h->program_size, 256u);
  EXPECT_EQ(h->segment_base_offset, 0u);
}

TEST(PteHeader, ProgramWithSegments) {
  FileBuilder f(1024);
  f.extended(32, 200, 256, 700);
  auto h = parse_pte_header(f.bytes);
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_TRUE(h->has_extended_header);
  EXPECT_EQ(h->program_size, 200u);
  EXPECT_EQ(h->segment_base_offset, 256u);
  EXPECT_EQ(h->segment_data_size, 700u);
}

TEST(PteHeader, ShortExtendedHeaderHasNoDataSize) {
  FileBuilder f(1024);
  f.extended(24, 200, 256, 0);
  auto h = parse_pte_header(f.bytes);
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(h->segment_data_size, 0u);
}

TEST(PteHeader, TooShortForIdentifier) {
  Status s = status_of_parse(std::vector<uint8_t>(7, 0));
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(s.message().find("7 bytes"), std::string::npos) << s.message();
}

TEST(PteHeader, OtherFormatVersionIsNamed) {
  Status s = status_of_parse(FileBuilder(128, "ET11").bytes);
  EXPECT_EQ(s.code(), StatusCode::kIncompatibleVersion);
  EXPECT_NE(s.message().find("'ET11'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("re-export"), std::string::npos) << s.message();
}

TEST(PteHeader, BundledProgramIsRecognised) {
  Status s = status_of_parse(FileBuilder(128, "BP08").bytes);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bundled"), std::string::npos) << s.message();
}

TEST(PteHeader, ForeignFileShowsItsBytes) {
  FileBuilder f(128, "\x89PNG");
  Status s = status_of_parse(f.bytes);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("\\x89PNG"), std::string::npos) << s.message();
}

TEST(PteHeader, RootOffsetOutsideFile) {
  EXPECT_EQ(status_of_parse(FileBuilder(128, "ET12", 128).bytes).code(),
            StatusCode::kInvalidProgram);
  EXPECT_EQ(status_of_parse(FileBuilder(128, "ET12", 4).bytes).code(), StatusCode::kInvalidProgram);
  EXPECT_EQ(status_of_parse(FileBuilder(128, "ET12", 66).bytes).code(),
            StatusCode::kInvalidProgram);
}

TEST(PteHeader, RootOffsetPastProgramPart) {
  FileBuilder f(1024, "ET12", 300);
  f.extended(32, 200, 256, 700);
  EXPECT_EQ(status_of_parse(f.bytes).code(), StatusCode::kInvalidProgram);
}

TEST(PteHeader, ExtendedHeaderTooShort) {
  FileBuilder f(1024);
  f.extended(16, 200, 256, 0);
  Status s = status_of_parse(f.bytes);
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(s.message().find("length is 16"), std::string::npos) << s.message();
}

TEST(PteHeader, ExtendedHeaderPastEndOfFile) {
  FileBuilder f(32);
  f.put32(0, 16);
  std::memcpy(f.bytes.data() + 8, "eh00", 4);
  f.put32(12, 32);
  EXPECT_EQ(status_of_parse(f.bytes).code(), StatusCode::kInvalidProgram);
}

TEST(PteHeader, ProgramSizeLargerThanFile) {
  FileBuilder f(1024);
  f.extended(32, 5000, 0, 0);
  EXPECT_EQ(status_of_parse(f.bytes).code(), StatusCode::kInvalidProgram);
}

TEST(PteHeader, SegmentsInsideProgramPart) {
  FileBuilder f(1024);
  f.extended(32, 200, 128, 100);
  Status s = status_of_parse(f.bytes);
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(s.message().find("inside"), std::string::npos) << s.message();
}

TEST(PteHeader, TruncatedSegments) {
  FileBuilder f(1024);
  f.extended(32, 200, 256, 769);  // one byte more than the file holds
  Status s = status_of_parse(f.bytes);
  EXPECT_EQ(s.code(), StatusCode::kInvalidProgram);
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
}

TEST(PteHeader, SegmentSizeOverflowIsCaught) {
  FileBuilder f(1024);
  f.extended(32, 200, 256, ~uint64_t{0} - 100);
  EXPECT_EQ(status_of_parse(f.bytes).code(), StatusCode::kInvalidProgram);
}

}  // namespace
}  // namespace et
