// libFuzzer target, the loader: arbitrary bytes as a .pte program, driven through
// program load, method load and input binding, without executing (many times faster
// than et_execute_fuzzer, so it reaches deeper into the verifier). Build with
// scripts/fuzz.
#include <cstddef>
#include <cstdint>

#include "tests/support/exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  et::testing::exercise_program({data, size}, {}, {.execute = false, .max_bytes = size_t{1} << 20});
  return 0;
}
