// libFuzzer target: arbitrary bytes as the external data file (.ptd) of each fixture
// program that keeps its weights in one (portable and XNNPACK-delegated; a mutated
// seed still matches the program it came from), driven through data file load,
// program load with it, method load and execute. Build with scripts/fuzz.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/exercise.h"

namespace {

std::vector<uint8_t> fixture(const char* name) {
  std::ifstream in(std::string(ET_FIXTURES_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<uint8_t> programs[] = {
      fixture("mlp_ptd.pte"), fixture("mlp_ptd_xnnpack.pte"), fixture("cnn_ptd_xnnpack.pte")};
  for (const std::vector<uint8_t>& program : programs) {
    et::testing::exercise_program(program, {data, size});
  }
  return 0;
}
