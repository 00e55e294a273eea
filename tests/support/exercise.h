// Drives a program as far as it will go: load it, load every method, give unplanned
// outputs memory, bind inputs (zeros; scalars at their traced values) at the declared
// shapes in exact heap buffers and then at smaller dynamic shapes chosen from the bytes,
// each ending a mapping as an input at the end of a segment does, execute twice per
// binding, and read every output through the daemon's encoding. Used on corrupted and
// fuzzed bytes, where the only requirement is that every step either succeeds or
// returns an error: no crash, no sanitizer report.
#pragma once

#include <cstdint>
#include <span>

namespace et::testing {

struct ExerciseResult {
  bool program_loaded = false;
  int methods_loaded = 0;
  int methods_executed = 0;
};

// `data`: the program's external data file (.ptd) bytes; empty for none.
ExerciseResult exercise_program(std::span<const uint8_t> bytes, std::span<const uint8_t> data = {});

}  // namespace et::testing
