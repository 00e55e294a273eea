#include "runtime/core/bundled_program.h"

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "runtime/core/tensor.h"
#include "runtime/schema/bundled_program_generated.h"

namespace et {
namespace {

constexpr flatbuffers::uoffset_t kMaxDepth = 16;
constexpr flatbuffers::uoffset_t kMaxTables = 10'000'000;
// Test values a bundle may hold in all (inputs and expected outputs of every case): a
// flatbuffer can name one table many times, so the file's size alone bounds nothing.
constexpr size_t kMaxValues = 100'000;
// Where the format aligns its byte vectors (force_align in the schema), relative to
// the start of the file: the program and each tensor's data are used in place.
constexpr size_t kProgramAlignment = 32;
constexpr size_t kTensorDataAlignment = 16;

Result<BundledValue> read_tensor(const bfb::Tensor& t, const uint8_t* file) {
  BundledValue v;
  v.kind = ValueKind::kTensor;
  ET_ASSIGN_OR_RETURN(v.dtype, scalar_type_from_code(t.scalar_type()));
  const size_t rank = t.sizes() ? t.sizes()->size() : 0;
  if (rank > static_cast<size_t>(kMaxRank)) {
    return invalid_program(
        fmt::format("a tensor of rank {}; the runtime holds at most {}", rank, kMaxRank));
  }
  uint64_t numel = 1;
  for (size_t d = 0; d < rank; ++d) {
    const int32_t size = t.sizes()->Get(static_cast<flatbuffers::uoffset_t>(d));
    if (size < 0) return invalid_program(fmt::format("size {} of dim {} is negative", size, d));
    v.sizes.push_back(size);
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(size), &numel)) {
      return invalid_program("a tensor's element count overflows");
    }
  }
  if (t.dim_order() && t.dim_order()->size() > 0) {
    v.dim_order.assign(t.dim_order()->begin(), t.dim_order()->end());
  } else {
    for (size_t d = 0; d < rank; ++d) v.dim_order.push_back(static_cast<uint8_t>(d));
  }
  std::vector<uint8_t> sorted = v.dim_order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < sorted.size(); ++d) {
    if (sorted.size() != rank || sorted[d] != d) {
      return invalid_program(fmt::format("dim order ({}) is not a permutation of the {} dims",
                                         fmt::join(v.dim_order, ", "), rank));
    }
  }
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(element_size(v.dtype)), &nbytes)) {
    return invalid_program("a tensor's byte count overflows");
  }
  const size_t have = t.data() ? t.data()->size() : 0;
  if (have != nbytes) {
    return invalid_program(fmt::format("{} [{}] needs {} bytes of data; the file holds {}",
                                       scalar_type_name(v.dtype), fmt::join(v.sizes, ", "), nbytes,
                                       have));
  }
  if (have > 0) {
    if (static_cast<size_t>(t.data()->data() - file) % kTensorDataAlignment != 0) {
      return invalid_program(fmt::format("a tensor's data is not aligned to {} bytes in the file",
                                         kTensorDataAlignment));
    }
    v.data = {t.data()->data(), have};
  }
  return v;
}

Result<BundledValue> read_value(const bfb::Value* value, const uint8_t* file) {
  if (value == nullptr) return invalid_program("a value is missing");
  if (value->val() == nullptr) {
    return invalid_program(
        fmt::format("a value of kind {} carries nothing", static_cast<int>(value->val_type())));
  }
  BundledValue v;
  switch (value->val_type()) {
    case bfb::ValueUnion::Tensor:
      return read_tensor(*value->val_as_Tensor(), file);
    case bfb::ValueUnion::Int:
      v.kind = ValueKind::kInt;
      v.int_value = value->val_as_Int()->value();
      return v;
    case bfb::ValueUnion::Bool:
      v.kind = ValueKind::kBool;
      v.bool_value = value->val_as_Bool()->value();
      return v;
    case bfb::ValueUnion::Double:
      v.kind = ValueKind::kDouble;
      v.double_value = value->val_as_Double()->value();
      return v;
    default:
      return invalid_program(
          fmt::format("a value of unknown kind {}", static_cast<int>(value->val_type())));
  }
}

// Reads `values`, counting them against `budget` (values left to read in the bundle).
Result<std::vector<BundledValue>> read_values(
    const flatbuffers::Vector<flatbuffers::Offset<bfb::Value>>* values, const char* what,
    const uint8_t* file, size_t& budget) {
  std::vector<BundledValue> out;
  if (values == nullptr) return out;
  if (values->size() > budget) {
    return invalid_program(
        fmt::format("the bundle holds more than {} test values in all", kMaxValues));
  }
  budget -= values->size();
  for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i) {
    auto v = read_value(values->Get(i), file);
    if (!v.ok()) return v.status().with_context(fmt::format("{} {}", what, i));
    out.push_back(std::move(v).value());
  }
  return out;
}

Result<BundledMethodSuite> read_suite(const bfb::MethodTestSuite* suite, size_t index,
                                      const uint8_t* file, size_t& budget) {
  if (suite == nullptr || suite->method_name() == nullptr) {
    return invalid_program(fmt::format("test suite {} names no method", index));
  }
  BundledMethodSuite out;
  out.method = suite->method_name()->str();
  if (suite->test_cases() == nullptr) return out;
  for (flatbuffers::uoffset_t c = 0; c < suite->test_cases()->size(); ++c) {
    const bfb::TestCase* test = suite->test_cases()->Get(c);
    if (test == nullptr || budget == 0) {
      return invalid_program(
          test == nullptr
              ? fmt::format("test case {} of method '{}' is missing", c, out.method)
              : fmt::format("the bundle holds more than {} test values in all", kMaxValues));
    }
    --budget;  // a case counts, even with no values
    const std::string where = fmt::format("test case {} of method '{}'", c, out.method);
    BundledTestCase parsed;
    auto inputs = read_values(test->inputs(), "input", file, budget);
    if (!inputs.ok()) return inputs.status().with_context(where);
    auto expected = read_values(test->expected_outputs(), "expected output", file, budget);
    if (!expected.ok()) return expected.status().with_context(where);
    parsed.inputs = std::move(inputs).value();
    parsed.expected_outputs = std::move(expected).value();
    out.cases.push_back(std::move(parsed));
  }
  return out;
}

}  // namespace

bool is_bundled_program(std::span<const uint8_t> file) {
  return file.size() >= 8 && std::memcmp(file.data() + 4, kBundledProgramIdentifier.data(), 4) == 0;
}

size_t BundledTests::num_cases() const {
  size_t n = 0;
  for (const BundledMethodSuite& s : suites) n += s.cases.size();
  return n;
}

Result<BundledProgramParts> parse_bundled_program(std::shared_ptr<const ProgramBytes> bundle) {
  const std::span<const uint8_t> file = bundle->bytes();
  if (!is_bundled_program(file)) {
    return invalid_program("not a bundled program (no 'BP08' identifier at byte 4)");
  }
  if (file.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return invalid_program(
        fmt::format("the bundled program is {} bytes; flatbuffers reads at most {}", file.size(),
                    FLATBUFFERS_MAX_BUFFER_SIZE - 1));
  }
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxDepth;
  options.max_tables = kMaxTables;
  flatbuffers::Verifier verifier(file.data(), file.size(), options);
  if (!verifier.VerifyBuffer<bfb::BundledProgram>(kBundledProgramIdentifier.data())) {
    return invalid_program(
        "the bundled program's flatbuffer is malformed (a table, vector or string lies "
        "outside the file or is misaligned): the .bpte is corrupt or truncated");
  }
  const bfb::BundledProgram* root = flatbuffers::GetRoot<bfb::BundledProgram>(file.data());
  if (root->program() == nullptr || root->program()->size() == 0) {
    return invalid_program("the bundled program holds no program");
  }
  if (static_cast<size_t>(root->program()->data() - file.data()) % kProgramAlignment != 0) {
    return invalid_program(fmt::format(
        "the program inside the bundle is not aligned to {} bytes in the file", kProgramAlignment));
  }
  auto tests = std::make_shared<BundledTests>();
  tests->version = root->version();
  size_t budget = kMaxValues;
  if (root->method_test_suites()) {
    for (flatbuffers::uoffset_t s = 0; s < root->method_test_suites()->size(); ++s) {
      auto suite = read_suite(root->method_test_suites()->Get(s), s, file.data(), budget);
      if (!suite.ok()) return suite.status().with_context("the bundled program's tests");
      for (const BundledMethodSuite& earlier : tests->suites) {
        if (earlier.method == suite->method) {
          return invalid_program(fmt::format(
              "the bundled program's tests: method '{}' has two test suites", earlier.method));
        }
      }
      tests->suites.push_back(std::move(suite).value());
    }
  }
  BundledProgramParts parts;
  parts.program = ProgramBytes::part_of(bundle, {root->program()->data(), root->program()->size()});
  tests->bytes = std::move(bundle);
  parts.tests = std::move(tests);
  return parts;
}

}  // namespace et
