// libFuzzer target: arbitrary bytes as a .pte program, driven through load, method
// load, input binding and execute. Build with scripts/fuzz.
#include <cstddef>
#include <cstdint>

#include "tests/support/exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  et::testing::exercise_program({data, size});
  return 0;
}
