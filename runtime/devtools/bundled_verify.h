// Runs a bundled program's test cases (bundled_program.h) and compares what each
// method returns with what the bundle expects, as ExecuTorch's bundled program
// verification does: an element passes when |got - expected| <= atol + rtol *
// |expected| (NaN matches NaN, an infinity matches the same infinity); integer and
// bool elements and int/bool outputs must be equal.
//
// Each tested method gets one fresh instance; its cases run on it in the file's
// order (the exporter records a method's cases one after the other on one module, so
// state a method keeps between calls shows in the later cases' expectations).
//
// Thread-safety: verify_bundled() shares nothing between calls.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/core/program.h"
#include "runtime/core/status.h"

namespace et {

// ExecuTorch's defaults for bundled program verification.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-8;
};

struct OutputCheck {
  size_t index = 0;
  bool passed = false;
  size_t elements = 0;    // compared
  size_t mismatched = 0;  // outside the tolerance
  double max_abs_error = 0;
  double max_rel_error = 0;  // |got - expected| / |expected|, over expected != 0
  // Set when the output could not be compared element by element (kind, dtype or
  // shape differs); `passed` is then false.
  std::string problem;
};

struct CaseResult {
  std::string method;
  size_t case_index = 0;
  // Not ok when the case could not run: the method failed to load, an input did not
  // bind, execute failed, or the case's counts do not match the method's. `outputs`
  // is then empty.
  Status status;
  std::vector<OutputCheck> outputs;

  bool passed() const;
};

struct VerifyReport {
  Tolerance tolerance;
  std::vector<CaseResult> cases;  // suite by suite, case by case

  size_t num_passed() const;
  bool passed() const { return num_passed() == cases.size(); }
};

struct VerifyOptions {
  Tolerance tolerance;
  std::string method;  // empty: every tested method; else only its suite
  MethodOptions method_options;
  ExecuteLimits limits;  // for each execute
};

// Runs the test cases of `program`. A case that fails is reported in its CaseResult,
// never as the call's error; so are the cases left once options.limits.deadline has
// passed (DeadlineExceeded) or its `cancelled` is set (Unavailable): each execute is
// bounded by the limits, and the whole verification by its deadline. Errors: FailedPrecondition
// when `program` is not a bundled program; NotFound when options.method has no test suite (naming
// those that do); InvalidArgument for a negative or NaN tolerance.
Result<VerifyReport> verify_bundled(const std::shared_ptr<const Program>& program,
                                    const VerifyOptions& options = {});

}  // namespace et
