// Drives a program as far as it will go: load it, load every method, give unplanned
// outputs memory, bind inputs (zeros; scalars at their traced values) at the declared
// shapes in exact heap buffers and then at smaller dynamic shapes chosen from the bytes,
// each ending a mapping as an input at the end of a segment does, execute twice per
// binding, and read every output through the daemon's encoding; a bundled program's
// test cases are run and compared too. Used on corrupted and
// fuzzed bytes, where the only requirement is that every step either succeeds or
// returns an error: no crash, no sanitizer report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace et::testing {

struct ExerciseOptions {
  // false: stop after binding inputs (load, method load and binding only: the loader
  // fuzzer, many times faster).
  bool execute = true;
  // Largest planned memory, input or output a method may have to be driven. The bound
  // on buffers bounds the work too: a matmul's multiply-adds are at most the square
  // root of the product of its three operands' element counts.
  size_t max_bytes = size_t{64} << 20;
};

struct ExerciseResult {
  bool program_loaded = false;
  int methods_loaded = 0;
  int methods_executed = 0;
};

// `data`: the program's external data file (.ptd) bytes; empty for none.
ExerciseResult exercise_program(std::span<const uint8_t> bytes, std::span<const uint8_t> data = {},
                                const ExerciseOptions& options = {});

}  // namespace et::testing
