// etclient-run: runs one method through a running et-serverd with libetclient, like
// et-run does in-process: the fixture suite's proof that every program works through
// the C++ client (tests/test_client_fixtures.py).
//
//   etclient-run --socket PATH MODEL.pte [--data FILE.ptd] [--method NAME] [--input FILE.npy]...
//                [--then --input FILE.npy ...]... [--output-dir DIR] [--shared]
//                [--profile] [--etdump FILE.etdp] [--trace FILE.json]
//   etclient-run --socket PATH MODEL.bpte --verify [--method NAME] [--rtol R] [--atol A]
//
// Each --then starts another call on the same method instance (stateful methods keep
// their state between them). Outputs of call K land in DIR/callK/0.npy, ... in C order.
// --shared writes tensor inputs into Method::empty_input() buffers (zero copy) instead
// of passing host memory. --profile, --etdump and --trace have the daemon profile every
// call (Method::start_profile/stop_profile), then print its table on stdout (as et-run
// --profile does), write its ETDump, write its Chrome trace. --verify runs a bundled
// program's test cases in the daemon (Program::verify; only NAME's with --method) and
// prints a table as et-run --verify does. Exit status: 0 success, 1 error (on stderr),
// 2 bad usage, 3 when --verify finds a case that fails.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "etclient/client.h"
#include "tools/layout.h"
#include "tools/npy.h"

namespace {

using etclient::DType;

DType to_dtype(et::ScalarType t) {
  switch (t) {
    case et::ScalarType::kByte:
      return DType::kUInt8;
    case et::ScalarType::kChar:
      return DType::kInt8;
    case et::ScalarType::kShort:
      return DType::kInt16;
    case et::ScalarType::kInt:
      return DType::kInt32;
    case et::ScalarType::kLong:
      return DType::kInt64;
    case et::ScalarType::kHalf:
      return DType::kFloat16;
    case et::ScalarType::kDouble:
      return DType::kFloat64;
    case et::ScalarType::kBool:
      return DType::kBool;
    case et::ScalarType::kBFloat16:
      return DType::kBFloat16;
    default:
      return DType::kFloat32;
  }
}

et::ScalarType to_scalar_type(DType t) {
  static const et::ScalarType kTypes[] = {et::ScalarType::kByte,  et::ScalarType::kChar,
                                          et::ScalarType::kShort, et::ScalarType::kInt,
                                          et::ScalarType::kLong,  et::ScalarType::kHalf,
                                          et::ScalarType::kFloat, et::ScalarType::kDouble,
                                          et::ScalarType::kBool,  et::ScalarType::kBFloat16};
  return kTypes[static_cast<int>(t)];
}

std::vector<int64_t> row_major(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;)
    strides[d - 1] = strides[d] * std::max<int64_t>(1, sizes[d]);
  return strides;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "etclient-run: %s\n", message.c_str());
  return 1;
}

// Appends one input from a .npy file, as input `index` of `method` declares it.
etclient::Status add_input(etclient::Method& method, size_t index, const et::tools::NpyArray& a,
                           bool shared, std::vector<etclient::Input>& inputs) {
  const auto& declared = method.meta().inputs.at(index);
  if (a.shape.empty() && declared.kind != "tensor") {  // a 0-d array: a scalar input
    const uint8_t* p = a.data.data();
    if (declared.kind == "int") {
      int64_t v = 0;
      if (a.dtype == et::ScalarType::kLong) {
        std::memcpy(&v, p, sizeof v);
      } else {
        int32_t narrow = 0;
        std::memcpy(&narrow, p, sizeof narrow);
        v = narrow;
      }
      inputs.emplace_back(std::in_place_type<int64_t>, v);
    } else if (declared.kind == "float") {
      double v = 0;
      if (a.dtype == et::ScalarType::kDouble) {
        std::memcpy(&v, p, sizeof v);
      } else {
        float narrow = 0;
        std::memcpy(&narrow, p, sizeof narrow);
        v = narrow;
      }
      inputs.emplace_back(std::in_place_type<double>, v);
    } else {
      inputs.emplace_back(std::in_place_type<bool>, p[0] != 0);
    }
    return etclient::Status();
  }
  DType dtype = to_dtype(a.dtype);
  // bfloat16 travels in .npy files as uint16 bit patterns.
  if (declared.tensor && declared.tensor->dtype == DType::kBFloat16 &&
      a.dtype == et::ScalarType::kUInt16) {
    dtype = DType::kBFloat16;
  }
  if (!shared) {
    // Braces: clang 14 has no parenthesized aggregate initialization.
    inputs.emplace_back(std::in_place_type<etclient::HostTensor>,
                        etclient::HostTensor{a.data.data(), dtype, a.shape, {}});
    return etclient::Status();
  }
  auto buffer = method.empty_input(index);
  if (!buffer.ok()) return buffer.status();
  if (buffer->sizes() != a.shape) {  // a dynamic input: fewer elements than its bound
    if (etclient::Status s = buffer->resize(a.shape); !s.ok()) return s;
  }
  if (buffer->nbytes() != a.data.size()) {
    return etclient::Status(etclient::StatusCode::kInvalidArgument,
                            "input " + std::to_string(index) + ": the file holds " +
                                std::to_string(a.data.size()) + " bytes, the method's buffer " +
                                std::to_string(buffer->nbytes()));
  }
  et::tools::copy_strided(a.data.data(), row_major(a.shape), buffer->data(), buffer->strides(),
                          a.shape, etclient::element_size(dtype));
  inputs.emplace_back(std::in_place_type<etclient::SharedTensor>, *buffer);
  return etclient::Status();
}

// Prints a line per case and output, as et-run --verify does; 0 when every case
// passed, else 3.
int print_verify_report(const etclient::VerifyReport& report, const std::string& path) {
  std::printf("%s: %zu test case(s), rtol %g, atol %g\n", path.c_str(), report.cases.size(),
              report.rtol, report.atol);
  std::printf("%-16s %4s %6s  %-6s %13s %13s  %s\n", "method", "case", "output", "result",
              "max abs err", "max rel err", "mismatched");
  for (const etclient::VerifyCase& c : report.cases) {
    if (!c.error.empty()) {
      std::printf("%-16s %4u %6s  %-6s %s\n", c.method.c_str(), c.case_index, "-", "ERROR",
                  c.error.c_str());
      continue;
    }
    for (const etclient::VerifyOutput& o : c.outputs) {
      if (!o.problem.empty()) {
        std::printf("%-16s %4u %6u  %-6s %s\n", c.method.c_str(), c.case_index, o.index, "FAIL",
                    o.problem.c_str());
        continue;
      }
      std::printf("%-16s %4u %6u  %-6s %13.3g %13.3g  %llu/%llu\n", c.method.c_str(), c.case_index,
                  o.index, o.passed ? "pass" : "FAIL", o.max_abs_error, o.max_rel_error,
                  static_cast<unsigned long long>(o.mismatched),
                  static_cast<unsigned long long>(o.elements));
    }
  }
  std::printf("%zu of %zu case(s) passed\n", report.passed, report.cases.size());
  return report.all_passed() ? 0 : 3;
}

bool write_file(const std::string& path, const void* bytes, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool written = std::fwrite(bytes, 1, size, f) == size;
  return std::fclose(f) == 0 && written;
}

// Stops the profile `method` has been taking; prints its table on stdout when `table`,
// writes its ETDump and Chrome trace to the paths given (empty: not asked for). 0, or 1
// after an error.
int finish_profile(etclient::Method& method, bool table, const std::string& etdump_path,
                   const std::string& trace_path) {
  auto profile =
      method.stop_profile({.etdump = !etdump_path.empty(), .chrome_trace = !trace_path.empty()});
  if (!profile.ok()) return fail(profile.status().message());
  if (table) std::printf("%s", profile->table.c_str());
  if (!etdump_path.empty()) {
    if (!write_file(etdump_path, profile->etdump.data(), profile->etdump.size())) {
      return fail("cannot write " + etdump_path + ": " + std::strerror(errno));
    }
    std::fprintf(stderr, "etclient-run: ETDump written to %s\n", etdump_path.c_str());
  }
  if (!trace_path.empty()) {
    if (!write_file(trace_path, profile->chrome_trace.data(), profile->chrome_trace.size())) {
      return fail("cannot write " + trace_path + ": " + std::strerror(errno));
    }
    std::fprintf(stderr, "etclient-run: Chrome trace written to %s\n", trace_path.c_str());
  }
  return 0;
}

// A tolerance given on the command line: a number of zero or more.
std::optional<double> parse_tolerance(const std::string& text) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(x >= 0)) return std::nullopt;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket, model, data, method_name = "forward", out_dir = ".";
  std::string etdump_path, trace_path;
  std::vector<std::vector<std::string>> calls(1);
  bool shared = false, verify = false, profile_table = false;
  etclient::VerifyOptions verify_options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--socket") {
      socket = next();
    } else if (a == "--method") {
      method_name = verify_options.method = next();
    } else if (a == "--verify") {
      verify = true;
    } else if (a == "--rtol" || a == "--atol") {
      const std::optional<double> x = parse_tolerance(next());
      if (!x) {
        std::fprintf(stderr, "etclient-run: %s needs a number of zero or more\n", a.c_str());
        return 2;
      }
      (a == "--rtol" ? verify_options.rtol : verify_options.atol) = x;
    } else if (a == "--data") {
      data = next();
    } else if (a == "--input") {
      calls.back().push_back(next());
    } else if (a == "--then") {
      calls.emplace_back();
    } else if (a == "--output-dir") {
      out_dir = next();
    } else if (a == "--shared") {
      shared = true;
    } else if (a == "--profile") {
      profile_table = true;
    } else if (a == "--etdump") {
      etdump_path = next();
    } else if (a == "--trace") {
      trace_path = next();
    } else {
      model = a;
    }
  }
  const bool profile = profile_table || !etdump_path.empty() || !trace_path.empty();
  if (model.empty() || (verify && profile)) {
    std::fprintf(stderr,
                 "usage: etclient-run --socket PATH MODEL.pte [--data F.ptd] [--method NAME] "
                 "[--input F.npy]... "
                 "[--then --input F.npy ...]... [--output-dir DIR] [--shared] [--profile] "
                 "[--etdump F.etdp] [--trace F.json]\n"
                 "       etclient-run --socket PATH MODEL.bpte --verify [--method NAME] "
                 "[--rtol R] [--atol A]\n");
    return 2;
  }
  auto client = etclient::Client::connect({.socket = socket, .client_name = "etclient-run"});
  if (!client.ok()) return fail(client.status().message());
  auto program = (*client)->load_program(model, data);
  if (!program.ok()) return fail(program.status().message());
  if (verify) {
    auto report = (*program)->verify(verify_options);
    if (!report.ok()) return fail(report.status().message());
    return print_verify_report(*report, model);
  }
  auto method = (*program)->load_method(method_name);
  if (!method.ok()) return fail(method.status().message());
  std::fprintf(stderr, "etclient-run: transport %s\n", (*method)->transport());
  // With shared inputs, results go into buffers made once (the allocation-free path);
  // else each call gets fresh output slots.
  std::vector<etclient::SharedTensor> into;
  if (shared) {
    auto buffers = (*method)->output_buffers();
    if (!buffers.ok()) return fail(buffers.status().message());
    into = std::move(buffers).value();
  }
  if (profile) {
    // Keeps every call (the daemon keeps at most 100000).
    const auto keep = static_cast<uint32_t>(std::min<size_t>(calls.size(), 100'000));
    if (etclient::Status s = (*method)->start_profile(keep); !s.ok()) return fail(s.message());
  }

  for (size_t k = 0; k < calls.size(); ++k) {
    std::vector<etclient::Input> inputs;
    std::vector<et::tools::NpyArray> arrays;  // the host memory inputs point into
    arrays.reserve(calls[k].size());
    for (size_t i = 0; i < calls[k].size(); ++i) {
      auto a = et::tools::read_npy(calls[k][i]);
      if (!a.ok()) return fail(a.status().to_string());
      arrays.push_back(std::move(a).value());
      etclient::Status added = add_input(**method, i, arrays.back(), shared, inputs);
      if (!added.ok()) return fail(added.message());
    }
    etclient::Result<std::vector<etclient::SharedTensor>> outputs = into;
    if (shared) {
      if (etclient::Status s = (*method)->execute(inputs, into); !s.ok()) return fail(s.message());
      outputs = into;
    } else {
      outputs = (*method)->execute(inputs);
    }
    if (!outputs.ok()) return fail(outputs.status().message());
    const std::string dir = out_dir + "/call" + std::to_string(k);
    std::filesystem::create_directories(dir);
    for (size_t i = 0; i < outputs->size(); ++i) {
      const etclient::SharedTensor& t = (*outputs)[i];
      if (t.data() == nullptr) continue;  // None
      std::vector<uint8_t> c_order(t.nbytes());
      et::tools::copy_strided(t.data(), t.strides(), c_order.data(), row_major(t.sizes()),
                              t.sizes(), etclient::element_size(t.dtype()));
      et::Status st = et::tools::write_npy(dir + "/" + std::to_string(i) + ".npy",
                                           to_scalar_type(t.dtype()), t.sizes(), c_order.data());
      if (!st.ok()) return fail(st.to_string());
    }
  }
  return profile ? finish_profile(**method, profile_table, etdump_path, trace_path) : 0;
}
