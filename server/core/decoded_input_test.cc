#include "server/core/decoded_input.h"

#include <gtest/gtest.h>

#include <vector>

namespace et::server {
namespace {

ElementCount count(std::vector<int64_t> sizes) { return count_elements(sizes); }

TEST(CountElements, MultipliesTheSizes) {
  EXPECT_EQ(count({2, 3, 4}).elements, 24u);
  EXPECT_TRUE(count({2, 3, 4}).ok());
  EXPECT_EQ(count({}).elements, 1u);  // a scalar tensor
  EXPECT_EQ(count({5, 0, INT32_MAX}).elements, 0u);
}

TEST(CountElements, NamesTheFirstSizeOutOfRange) {
  EXPECT_EQ(count({2, -1, int64_t{1} << 31}).bad_size, -1);
  EXPECT_EQ(count({int64_t{1} << 31}).bad_size, int64_t{1} << 31);
  EXPECT_FALSE(count({-1}).ok());
}

TEST(CountElements, RefusesMoreThanTwoToTheFortyElements) {
  EXPECT_TRUE(count({int64_t{1} << 20, int64_t{1} << 20}).ok());
  const ElementCount over = count({int64_t{1} << 20, int64_t{1} << 20, 2});
  EXPECT_TRUE(over.too_many);
  EXPECT_FALSE(over.ok());
  // Sizes that would wrap a 64-bit product are caught before they do.
  EXPECT_TRUE(count({INT32_MAX, INT32_MAX, INT32_MAX}).too_many);
  // A size out of range is named even after the count is too large.
  EXPECT_EQ(count({INT32_MAX, INT32_MAX, -3}).bad_size, -3);
}

}  // namespace
}  // namespace et::server
