#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "runtime/core/kernel.h"

namespace et {
namespace {

bool aligned(const void* p, size_t to) { return reinterpret_cast<uintptr_t>(p) % to == 0; }

// The first instruction's scratch comes from the allocator; reset() keeps a block as
// large as it was, and the same request in the next instruction comes from that block,
// at the same addresses, aligned as asked and not overlapping.
TEST(TempArena, KeepsTheScratchOfTheLargestInstructionForTheNext) {
  TempArena arena;
  EXPECT_EQ(arena.kept(), 0u);
  void* a = arena.allocate(300000);
  void* b = arena.allocate(1000, 16);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::memset(a, 1, 300000);
  std::memset(b, 2, 1000);
  arena.reset();
  EXPECT_GE(arena.kept(), 301000u);
  EXPECT_LE(arena.kept(), 301000u + 2 * 64 + 64);
  void* c = arena.allocate(300000);
  void* d = arena.allocate(1000, 16);
  ASSERT_NE(c, nullptr);
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(aligned(c, 64));
  EXPECT_TRUE(aligned(d, 16));
  EXPECT_GE(static_cast<uint8_t*>(d), static_cast<uint8_t*>(c) + 300000);
  std::memset(c, 3, 300000);  // the whole range is writable (ASan: unpoisoned)
  std::memset(d, 4, 1000);
  arena.reset();
  void* e = arena.allocate(300000);
  EXPECT_EQ(e, c);  // the kept block again, not a fresh mapping
  arena.reset();
  EXPECT_GE(arena.kept(), 301000u);  // a smaller instruction keeps the block as it is
}

// Beyond kMostKept nothing is kept; the per-instruction limit still applies.
TEST(TempArena, KeepsNoMoreThanItsBoundAndHonoursTheLimit) {
  TempArena arena;
  ASSERT_NE(arena.allocate(TempArena::kMostKept + 1), nullptr);
  arena.reset();
  EXPECT_EQ(arena.kept(), 0u);
  TempArena small(1000);
  EXPECT_NE(small.allocate(600), nullptr);
  EXPECT_EQ(small.allocate(600), nullptr);  // 1200 bytes in one instruction
  small.reset();
  EXPECT_NE(small.allocate(600), nullptr);
  EXPECT_NE(small.allocate(400), nullptr);
}

}  // namespace
}  // namespace et
