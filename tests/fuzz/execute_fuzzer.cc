// libFuzzer target: arbitrary bytes as a .pte program; a program that passes
// verification is executed too (twice per binding, at full and smaller dynamic shapes)
// and its outputs are read as the daemon returns them. Buffers are capped at 1 MiB so
// that a mutated shape cannot turn an execution into seconds of arithmetic. Build with
// scripts/fuzz.
#include <cstddef>
#include <cstdint>

#include "tests/support/exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  et::testing::exercise_program({data, size}, {}, {.execute = true, .max_bytes = size_t{1} << 20});
  return 0;
}
