#include "runtime/devtools/bundled_verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "runtime/core/half.h"
#include "runtime/core/tensor.h"

namespace et {
namespace {

// How a dtype's elements compare: floating components within a tolerance, anything
// else byte for byte.
struct ElementCodec {
  bool floating = false;
  int components = 1;  // 2 for complex types
};

ElementCodec codec_of(ScalarType t) {
  switch (t) {
    case ScalarType::kHalf:
    case ScalarType::kBFloat16:
    case ScalarType::kFloat:
    case ScalarType::kDouble:
      return {true, 1};
    case ScalarType::kComplexHalf:
    case ScalarType::kComplexFloat:
    case ScalarType::kComplexDouble:
      return {true, 2};
    default:
      return {false, 1};
  }
}

// Component `c` of the floating element at `p`.
double floating_component(ScalarType t, const uint8_t* p, int c) {
  switch (t) {
    case ScalarType::kHalf:
    case ScalarType::kComplexHalf: {
      uint16_t bits;
      std::memcpy(&bits, p + 2 * c, 2);
      return half_detail::half_bits_to_float(bits);
    }
    case ScalarType::kBFloat16: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      return half_detail::bfloat16_bits_to_float(bits);
    }
    case ScalarType::kFloat:
    case ScalarType::kComplexFloat: {
      float v;
      std::memcpy(&v, p + 4 * c, 4);
      return v;
    }
    default: {
      double v;
      std::memcpy(&v, p + 8 * c, 8);
      return v;
    }
  }
}

// An exact element as a number, for the error figures only (int64 may round).
double exact_value(ScalarType t, const uint8_t* p) {
  auto read = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  switch (t) {
    case ScalarType::kChar:
    case ScalarType::kQInt8:
      return read(int8_t{});
    case ScalarType::kShort:
      return read(int16_t{});
    case ScalarType::kInt:
    case ScalarType::kQInt32:
      return read(int32_t{});
    case ScalarType::kLong:
      return read(int64_t{});
    case ScalarType::kUInt16:
      return read(uint16_t{});
    case ScalarType::kUInt32:
      return read(uint32_t{});
    case ScalarType::kUInt64:
      return read(uint64_t{});
    default:
      return read(uint8_t{});
  }
}

// Element strides of a contiguous layout in `dim_order`.
// (Unsigned: a tensor with a zero size may have other sizes whose product overflows;
// its strides are never used to read.)
std::array<int64_t, kMaxRank> strides_of(std::span<const int64_t> sizes,
                                         std::span<const uint8_t> dim_order) {
  std::array<int64_t, kMaxRank> strides{};
  uint64_t stride = 1;
  for (size_t k = dim_order.size(); k-- > 0;) {
    strides[dim_order[k]] = static_cast<int64_t>(stride);
    stride *= static_cast<uint64_t>(sizes[dim_order[k]]);
  }
  return strides;
}

struct Errors {
  size_t mismatched = 0;
  double max_abs = 0;
  double max_rel = 0;
};

void compare_floating(double got, double want, const Tolerance& tol, Errors& e) {
  if (std::isnan(got) || std::isnan(want)) {
    if (!(std::isnan(got) && std::isnan(want))) {
      ++e.mismatched;
      e.max_abs = INFINITY;
    }
    return;
  }
  if (std::isinf(got) || std::isinf(want)) {
    if (got != want) {
      ++e.mismatched;
      e.max_abs = INFINITY;
    }
    return;
  }
  const double abs = std::fabs(got - want);
  e.max_abs = std::max(e.max_abs, abs);
  if (want != 0) e.max_rel = std::max(e.max_rel, abs / std::fabs(want));
  if (abs > tol.atol + tol.rtol * std::fabs(want)) ++e.mismatched;
}

OutputCheck compare_tensor(const Tensor& got, const BundledValue& want, const Tolerance& tol) {
  OutputCheck check;
  std::vector<int64_t> got_sizes(got.sizes().begin(), got.sizes().end());
  if (got.dtype() != want.dtype) {
    check.problem = fmt::format("dtype {}, expected {}", scalar_type_name(got.dtype()),
                                scalar_type_name(want.dtype));
    return check;
  }
  if (got_sizes != want.sizes) {
    check.problem = fmt::format("shape [{}], expected [{}]", fmt::join(got_sizes, ", "),
                                fmt::join(want.sizes, ", "));
    return check;
  }
  if (!got.has_memory()) {
    check.problem = "the output has no memory";
    return check;
  }
  const size_t rank = want.sizes.size();
  const size_t esize = element_size(want.dtype);
  const std::array<int64_t, kMaxRank> want_strides = strides_of(want.sizes, want.dim_order);
  const ElementCodec codec = codec_of(want.dtype);
  const auto* got_base = static_cast<const uint8_t*>(got.data());
  Errors errors;
  std::array<int64_t, kMaxRank> index{};
  const auto numel = static_cast<size_t>(got.numel());
  for (size_t n = 0; n < numel; ++n) {
    int64_t got_at = 0, want_at = 0;
    for (size_t d = 0; d < rank; ++d) {
      got_at += index[d] * got.stride(static_cast<int>(d));
      want_at += index[d] * want_strides[d];
    }
    const uint8_t* g = got_base + static_cast<size_t>(got_at) * esize;
    const uint8_t* w = want.data.data() + static_cast<size_t>(want_at) * esize;
    if (codec.floating) {
      for (int c = 0; c < codec.components; ++c) {
        compare_floating(floating_component(want.dtype, g, c), floating_component(want.dtype, w, c),
                         tol, errors);
      }
    } else if (std::memcmp(g, w, esize) != 0) {
      ++errors.mismatched;
      const double a = exact_value(want.dtype, g), b = exact_value(want.dtype, w);
      errors.max_abs = std::max(errors.max_abs, std::fabs(a - b));
      if (b != 0) errors.max_rel = std::max(errors.max_rel, std::fabs(a - b) / std::fabs(b));
    }
    for (size_t d = rank; d-- > 0;) {  // the next logical index, last dim fastest
      if (++index[d] < want.sizes[d]) break;
      index[d] = 0;
    }
  }
  check.elements = numel;
  check.mismatched = errors.mismatched;
  check.max_abs_error = errors.max_abs;
  check.max_rel_error = errors.max_rel;
  check.passed = errors.mismatched == 0;
  return check;
}

const char* kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor:
      return "tensor";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kDouble:
      return "double";
    default:
      return "other";
  }
}

OutputCheck compare_output(const Value& got, const BundledValue& want, const Tolerance& tol) {
  if (got.kind() != want.kind) {
    OutputCheck check;
    check.problem =
        fmt::format("a {} output, expected a {}", kind_name(got.kind()), kind_name(want.kind));
    return check;
  }
  if (want.kind == ValueKind::kTensor) return compare_tensor(got.to_tensor(), want, tol);
  OutputCheck check;
  check.elements = 1;
  Errors errors;
  if (want.kind == ValueKind::kDouble) {
    compare_floating(got.to_double(), want.double_value, tol, errors);
  } else {
    const double a =
        want.kind == ValueKind::kInt ? static_cast<double>(got.to_int()) : got.to_bool();
    const double b =
        want.kind == ValueKind::kInt ? static_cast<double>(want.int_value) : want.bool_value;
    const bool equal = want.kind == ValueKind::kInt ? got.to_int() == want.int_value
                                                    : got.to_bool() == want.bool_value;
    if (!equal) {
      errors.mismatched = 1;
      errors.max_abs = std::fabs(a - b);
    }
  }
  check.mismatched = errors.mismatched;
  check.max_abs_error = errors.max_abs;
  check.max_rel_error = errors.max_rel;
  check.passed = errors.mismatched == 0;
  return check;
}

InputValue input_of(const BundledValue& v, std::vector<std::array<int64_t, kMaxRank>>& strides) {
  switch (v.kind) {
    case ValueKind::kInt:
      return InputValue::of_int(v.int_value);
    case ValueKind::kBool:
      return InputValue::of_bool(v.bool_value);
    case ValueKind::kDouble:
      return InputValue::of_double(v.double_value);
    default:
      break;
  }
  const std::array<int64_t, kMaxRank>& s = strides.emplace_back(strides_of(v.sizes, v.dim_order));
  TensorView view;
  view.data = const_cast<uint8_t*>(v.data.data());  // writable = false: never written
  view.nbytes = v.data.size();
  view.dtype = v.dtype;
  view.sizes = v.sizes;
  view.strides = {s.data(), v.sizes.size()};
  view.writable = false;
  return InputValue::of_tensor(view);
}

// Runs one case on `method`; fills result.status or result.outputs.
void run_case(Method& method, const BundledTestCase& test, const VerifyOptions& options,
              CaseResult& result) {
  if (test.inputs.size() != method.num_inputs()) {
    result.status = invalid_argument(fmt::format("the case gives {} input(s); the method takes {}",
                                                 test.inputs.size(), method.num_inputs()));
    return;
  }
  if (test.expected_outputs.size() != method.num_outputs()) {
    result.status =
        invalid_argument(fmt::format("the case expects {} output(s); the method returns {}",
                                     test.expected_outputs.size(), method.num_outputs()));
    return;
  }
  std::vector<std::array<int64_t, kMaxRank>> strides;
  strides.reserve(test.inputs.size());
  std::vector<InputValue> inputs;
  for (const BundledValue& v : test.inputs) inputs.push_back(input_of(v, strides));
  result.status = method.set_inputs(inputs);
  if (!result.status.ok()) return;
  result.status = method.execute(options.limits);
  if (!result.status.ok()) return;
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    auto got = method.output(i);
    if (!got.ok()) {
      result.status = got.status();
      result.outputs.clear();
      return;
    }
    OutputCheck check = compare_output(**got, test.expected_outputs[i], options.tolerance);
    check.index = i;
    result.outputs.push_back(std::move(check));
  }
}

using OutputBuffer = std::unique_ptr<uint8_t, void (*)(void*)>;

// Gives every output the method does not plan (exported with alloc_graph_output=False)
// memory of its own (zeroed, at least a byte), held in `buffers` for the method's
// life; all of it counts against the method's planned-memory limit.
Status give_outputs_memory(Method& method, uint64_t limit, std::vector<OutputBuffer>& buffers) {
  uint64_t total = method.planned_bytes();
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const ValueMeta& out = method.meta().outputs[i];
    if (!out.tensor || out.tensor->is_memory_planned || method.output_is_input(i)) continue;
    const uint64_t nbytes = std::max<uint64_t>(out.tensor->nbytes, 1);
    if (__builtin_add_overflow(total, nbytes, &total) || total > limit) {
      return resource_exhausted(fmt::format(
          "the method's unplanned outputs need more memory than its limit of {} bytes", limit));
    }
    void* p = std::calloc(nbytes, 1);
    if (p == nullptr) return resource_exhausted(fmt::format("cannot allocate {} bytes", nbytes));
    OutputBuffer& buffer = buffers.emplace_back(static_cast<uint8_t*>(p), &std::free);
    ET_RETURN_IF_ERROR(method.set_output_buffer(i, buffer.get(), nbytes));
  }
  return Status();
}

// Why the cases left are not run, or ok to go on.
Status stop_reason(const ExecuteLimits& limits) {
  if (limits.cancelled != nullptr && limits.cancelled->load(std::memory_order_relaxed)) {
    return unavailable("not run: the verification was stopped (its caller went away)");
  }
  if (std::chrono::steady_clock::now() > limits.deadline) {
    return deadline_exceeded("not run: the verification ran past its deadline");
  }
  return Status();
}

}  // namespace

bool CaseResult::passed() const {
  if (!status.ok()) return false;
  for (const OutputCheck& o : outputs) {
    if (!o.passed) return false;
  }
  return true;
}

size_t VerifyReport::num_passed() const {
  size_t n = 0;
  for (const CaseResult& c : cases) n += c.passed();
  return n;
}

Result<VerifyReport> verify_bundled(const std::shared_ptr<const Program>& program,
                                    const VerifyOptions& options) {
  const std::shared_ptr<const BundledTests>& tests = program->bundled_tests();
  if (tests == nullptr) {
    return failed_precondition(
        "this program carries no test cases: verification needs a bundled program (.bpte, "
        "made with executorch.devtools.BundledProgram)");
  }
  const Tolerance& tol = options.tolerance;
  if (!(tol.rtol >= 0) || !(tol.atol >= 0)) {
    return invalid_argument(
        fmt::format("tolerances must be zero or more; got rtol {} atol {}", tol.rtol, tol.atol));
  }
  if (!options.method.empty()) {
    bool found = false;
    std::vector<std::string> tested;
    for (const BundledMethodSuite& s : tests->suites) {
      found = found || s.method == options.method;
      tested.push_back(s.method);
    }
    if (!found) {
      return not_found(fmt::format("the bundle has no test cases for method '{}'; it tests: {}",
                                   options.method, fmt::join(tested, ", ")));
    }
  }
  VerifyReport report;
  report.tolerance = tol;
  for (const BundledMethodSuite& suite : tests->suites) {
    if (!options.method.empty() && suite.method != options.method) continue;
    auto method = Method::load(program, suite.method, options.method_options);
    std::vector<OutputBuffer> output_buffers;
    Status prepared = method.ok()
                          ? give_outputs_memory(**method, options.method_options.max_planned_bytes,
                                                output_buffers)
                          : method.status();
    for (size_t c = 0; c < suite.cases.size(); ++c) {
      CaseResult& result = report.cases.emplace_back();
      result.method = suite.method;
      result.case_index = c;
      if (!prepared.ok()) {
        result.status = prepared;
        continue;
      }
      if (Status stop = stop_reason(options.limits); !stop.ok()) {
        result.status = stop;
        continue;
      }
      run_case(**method, suite.cases[c], options, result);
    }
  }
  return report;
}

}  // namespace et
