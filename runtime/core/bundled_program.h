// Bundled programs (.bpte, identifier 'BP08'; docs: shared FORMAT.md section 8): a
// .pte program together with test cases for its methods, each case the inputs to give
// a method and the outputs it must produce.
//
// Program::load() accepts a bundled program anywhere a .pte is accepted: it loads the
// embedded program and keeps the test cases (Program::bundled_tests()). Running them
// is bundled_verify.h's work.
//
// Ownership: BundledTests points into the bundle's bytes and holds them.
// Thread-safety: immutable after parsing.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/method_meta.h"
#include "runtime/core/program_bytes.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/status.h"

namespace et {

inline constexpr std::string_view kBundledProgramIdentifier = "BP08";

// True when `file` carries the bundled program identifier (it may still be corrupt).
bool is_bundled_program(std::span<const uint8_t> file);

// One input or expected output of a test case.
struct BundledValue {
  ValueKind kind = ValueKind::kNone;  // kTensor, kInt, kBool or kDouble
  // kTensor: the element type, sizes, dim order (a permutation of 0..rank-1) and the
  // elements, laid out in that dim order; data.size() == numel * element size.
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> dim_order;
  std::span<const uint8_t> data;
  int64_t int_value = 0;
  bool bool_value = false;
  double double_value = 0;
};

struct BundledTestCase {
  std::vector<BundledValue> inputs;
  std::vector<BundledValue> expected_outputs;
};

struct BundledMethodSuite {
  std::string method;
  std::vector<BundledTestCase> cases;
};

struct BundledTests {
  std::shared_ptr<const ProgramBytes> bytes;  // the bundle: tensor data points into it
  uint32_t version = 0;
  std::vector<BundledMethodSuite> suites;  // one per tested method, in the file's order

  size_t num_cases() const;
};

struct BundledProgramParts {
  std::shared_ptr<const ProgramBytes> program;  // the embedded .pte (a view of the bundle)
  std::shared_ptr<const BundledTests> tests;
};

// Verifies a bundled program's flatbuffer and every test value in it (known scalar
// types, ranks within the runtime's limit, dim orders that are permutations, data
// exactly as long as the sizes say and aligned as the format aligns it; at most
// 100,000 values and cases in all) and splits it into the embedded program and its
// tests. The embedded program itself is verified by Program::load(), which also
// checks that every suite names one of its methods.
// Errors: InvalidProgram naming what is wrong ("the bundled program's ...").
Result<BundledProgramParts> parse_bundled_program(std::shared_ptr<const ProgramBytes> bundle);

}  // namespace et
