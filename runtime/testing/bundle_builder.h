// Builds bundled programs (.bpte) for tests: a program's bytes plus test cases, each
// value written as given (so tests can also write inconsistent ones).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/scalar_type.h"

namespace et::testing {

struct BundleValue {
  enum class Kind { kTensor, kInt, kBool, kDouble } kind = Kind::kTensor;
  bool without_body = false;  // write the kind but no value table (a corrupt value)
  int8_t scalar_type = static_cast<int8_t>(ScalarType::kFloat);
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;  // written as given (empty: none written)
  std::vector<uint8_t> data;
  int64_t int_value = 0;
  bool bool_value = false;
  double double_value = 0;

  static BundleValue floats(std::vector<int32_t> sizes, const std::vector<float>& values);
  static BundleValue of_int(int64_t v);
};

struct BundleCase {
  std::vector<BundleValue> inputs;
  std::vector<BundleValue> expected_outputs;
};

struct BundleSuite {
  std::string method;
  std::vector<BundleCase> cases;
};

std::vector<uint8_t> build_bundle(const std::vector<uint8_t>& program,
                                  const std::vector<BundleSuite>& suites, uint32_t version = 0);

}  // namespace et::testing
