#include "tools/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

namespace et::tools {
namespace {

std::vector<uint8_t> npy_bytes(const std::string& header, const std::vector<uint8_t>& payload) {
  std::string h = header;
  const size_t unpadded = 10 + h.size() + 1;
  h.append((64 - unpadded % 64) % 64, ' ');
  h += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(h.size() & 0xff);
  bytes += static_cast<char>(h.size() >> 8);
  bytes += h;
  bytes.append(payload.begin(), payload.end());
  std::vector<uint8_t> out(bytes.begin(), bytes.end());
  return out;
}

TEST(Npy, WriteThenReadRoundTrips) {
  const auto path = (std::filesystem::temp_directory_path() / "et_npy_test.npy").string();
  const float values[6] = {1.5f, -2, 3, 4.25f, 5, 6};
  const int64_t shape[2] = {2, 3};
  ASSERT_TRUE(write_npy(path, ScalarType::kFloat, shape, values).ok());
  auto a = read_npy(path);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->dtype, ScalarType::kFloat);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(a->data.size(), sizeof values);
  EXPECT_EQ(std::memcmp(a->data.data(), values, sizeof values), 0);
  std::filesystem::remove(path);
}

TEST(Npy, ZeroDimAndOneDimShapes) {
  auto scalar = parse_npy(npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                                    {7, 0, 0, 0, 0, 0, 0, 0}));
  ASSERT_TRUE(scalar.ok()) << scalar.status().to_string();
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->dtype, ScalarType::kLong);
  auto vec =
      parse_npy(npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", {1, 0, 1}));
  ASSERT_TRUE(vec.ok()) << vec.status().to_string();
  EXPECT_EQ(vec->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(vec->dtype, ScalarType::kBool);
}

TEST(Npy, FortranOrderIsConvertedToC) {
  // [[1, 2, 3], [4, 5, 6]] stored column by column.
  auto a = parse_npy(
      npy_bytes("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }", {1, 4, 2, 5, 3, 6}));
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->data, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, RefusesBadFiles) {
  EXPECT_FALSE(parse_npy(std::vector<uint8_t>{1, 2, 3}).ok());
  auto big_endian = parse_npy(
      npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0}));
  ASSERT_FALSE(big_endian.ok());
  EXPECT_NE(big_endian.status().message().find("big-endian"), std::string::npos);
  auto short_payload = parse_npy(
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", {0, 0, 0, 0}));
  ASSERT_FALSE(short_payload.ok());
  EXPECT_NE(short_payload.status().message().find("needs 16"), std::string::npos);
  EXPECT_FALSE(
      parse_npy(npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", {})).ok());
  EXPECT_FALSE(parse_npy(npy_bytes("{'fortran_order': False, 'shape': (1,), }", {})).ok());
}

}  // namespace
}  // namespace et::tools
