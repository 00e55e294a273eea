// Drives a program as far as it will go: load it, load every method, bind inputs of
// the declared shapes (zeros; scalars at their traced values), give unplanned outputs
// memory, execute. Used on corrupted and fuzzed bytes, where the only requirement is
// that every step either succeeds or returns an error: no crash, no sanitizer report.
#pragma once

#include <cstdint>
#include <span>

namespace et::testing {

struct ExerciseResult {
  bool program_loaded = false;
  int methods_loaded = 0;
  int methods_executed = 0;
};

ExerciseResult exercise_program(std::span<const uint8_t> bytes);

}  // namespace et::testing
