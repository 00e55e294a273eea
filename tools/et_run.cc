// et-run: runs one method of a .pte program in this process (no daemon), reading
// inputs from .npy files and writing outputs as .npy files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/kernel.h"
#include "runtime/core/method.h"
#include "runtime/core/program.h"
#include "runtime/devtools/bundled_verify.h"
#include "runtime/llm/generation.h"
#include "tools/layout.h"
#include "tools/npy.h"
#include "tools/profile_output.h"

namespace et::tools {
namespace {

constexpr const char* kUsage = R"(usage:
  et-run MODEL.pte [--data FILE.ptd] [--method NAME] [--input FILE.npy]... [--output-dir DIR]
         [--profile] [--repeat N] [--trace FILE.json] [--etdump FILE.etdp]
  et-run MODEL.pte [--data FILE.ptd] --info
  et-run MODEL.bpte [--data FILE.ptd] --verify [--method NAME] [--rtol R] [--atol A]
  et-run MODEL.pte --generate IDS [--max-new-tokens N] [--stop ID]... [--temperature T]
         [--top-p P] [--seed S]
  et-run --list-ops
  et-run --list-backends

Runs one method of MODEL.pte (default: forward) in this process and writes its
outputs as DIR/0.npy, DIR/1.npy, ... (default DIR: the current directory).

  --input FILE.npy  one per method input, in order. A 0-d array gives an int, float
                    or bool input, as the method asks. A bfloat16 input takes a
                    uint16 array holding the bit patterns. Arrays are read in C
                    order; for a method that expects another dim order (e.g.
                    channels-last) et-run copies them into that layout and says so.
  --data FILE.ptd   the external data file the program was exported with, for
                    programs that keep their weights outside the .pte.
  --info            print the program's methods and what each declares
                    (MethodMeta: inputs, outputs, operators, backends, memory).
  --verify          run every test case of a bundled program (.bpte; with
                    --method, only that method's) and compare each output with
                    the one it expects: an element passes when |got - expected|
                    <= atol + rtol * |expected| (default rtol 1e-05, atol 1e-08,
                    ExecuTorch's defaults). Prints a line per case and output.
                    A .bpte also runs like a .pte: its program is used.
  --profile         time every operator, delegate call and delegate step (XNNPACK:
                    each run of nodes in one XNNPACK runtime, each node run by our
                    own kernels) and print a table, slowest first, with each
                    operator's tensor arguments.
  --repeat N        execute N times (default 1); the profile aggregates them.
  --trace FILE      write the profile as Chrome trace JSON (Perfetto, chrome://tracing).
  --etdump FILE     write the profile as an ETDump, which ExecuTorch's devtools read
                    (executorch.devtools.Inspector(etdump_path=FILE)).
  --generate IDS    token generation with an LLM forward as ExecuTorch's export flow
                    makes it (runtime/llm/generation.h): prefill the comma-separated
                    prompt token ids, then decode --max-new-tokens (default 32; 0:
                    until a --stop token or the context is full), greedy unless
                    --temperature > 0 (then sampled, --top-p nucleus, --seed).
                    Prints the tokens and the prefill and decode rates.
  --list-ops        print every registered operator, one name.overload per line.
  --list-backends   print every registered delegate backend id, one per line.

Outputs are written in C order; bfloat16 outputs as uint16 bit patterns.
Exit status: 0 on success, 1 on an error (printed on stderr), 2 on bad usage,
3 when --verify finds a case that fails.
)";

struct Options {
  std::string model;
  std::string data;  // the .ptd, or empty
  std::string method = "forward";
  std::vector<std::string> inputs;
  std::string output_dir = ".";
  bool info = false;
  bool verify = false;
  ProfileOutputs profile;
  int repeat = 1;
  bool method_given = false;
  Tolerance tolerance;
  bool list_ops = false;
  bool list_backends = false;
  bool generate = false;
  bool max_new_tokens_given = false;
  GenerationOptions generation;
};

int usage_error(const std::string& message) {
  std::fprintf(stderr, "et-run: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

int fail(const Status& status) {
  std::fprintf(stderr, "et-run: %s\n", status.to_string().c_str());
  return 1;
}

std::string tensor_meta_string(const TensorMeta& t) {
  return fmt::format(
      "{} {}{} dim_order {} nbytes {} {} {}{}", scalar_type_name(t.dtype), shape_string(t.sizes),
      t.is_dynamic ? " (upper bounds, dynamic)" : "", dim_order_string(t.dim_order), t.nbytes,
      t.is_memory_planned ? "planned" : "unplanned", t.device == DeviceType::kCpu ? "cpu" : "cuda",
      t.device_index != 0 ? fmt::format(":{}", t.device_index) : "");
}

std::string value_meta_string(const ValueMeta& v) {
  if (v.tensor) return "tensor " + tensor_meta_string(*v.tensor);
  switch (v.kind) {
    case ValueKind::kInt:
      return fmt::format("int (exported value {})", v.traced.to_int());
    case ValueKind::kDouble:
      return fmt::format("float (exported value {})", v.traced.to_double());
    case ValueKind::kBool:
      return fmt::format("bool (exported value {})", v.traced.to_bool());
    default:
      return std::string(value_kind_name(v.kind));
  }
}

void print_info(const Program& program, const std::string& path) {
  std::printf("%s: program version %u, %zu method(s)\n", path.c_str(), program.version(),
              program.num_methods());
  if (program.data_file() != nullptr) {
    std::printf("external data file: %zu named blob(s), %zu bytes\n",
                program.data_file()->num_keys(), program.data_file()->bytes().size());
  }
  for (const std::string& name : program.method_names()) {
    const MethodMeta& m = **program.method_meta(name);
    std::printf("\nmethod %s\n", name.c_str());
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      std::printf("  input %zu: %s\n", i, value_meta_string(m.inputs[i]).c_str());
    }
    for (size_t i = 0; i < m.outputs.size(); ++i) {
      std::printf("  output %zu: %s\n", i, value_meta_string(m.outputs[i]).c_str());
    }
    std::vector<int64_t> buffers(
        m.planned_buffer_sizes.begin() + (m.planned_buffer_sizes.empty() ? 0 : 1),
        m.planned_buffer_sizes.end());
    std::printf(
        "  planned memory: %s\n",
        buffers.empty() ? "none" : fmt::format("{} bytes", fmt::join(buffers, " + ")).c_str());
    std::printf("  operators (%zu): %s\n", m.operators.size(),
                fmt::format("{}", fmt::join(m.operators, ", ")).c_str());
    if (!m.backends.empty()) {
      std::printf("  backends: %s\n", fmt::format("{}", fmt::join(m.backends, ", ")).c_str());
    }
  }
  if (const auto& tests = program.bundled_tests()) {
    std::vector<std::string> suites;
    for (const BundledMethodSuite& s : tests->suites) {
      suites.push_back(fmt::format("{} ({} case(s))", s.method, s.cases.size()));
    }
    std::printf("\nbundled program: test cases for %s (et-run --verify runs them)\n",
                fmt::format("{}", fmt::join(suites, ", ")).c_str());
  }
}

// Prints a line per case and output; returns 0 when every case passed, else 3.
int print_verify_report(const VerifyReport& report, const std::string& path) {
  std::printf("%s: %zu test case(s), rtol %g, atol %g\n", path.c_str(), report.cases.size(),
              report.tolerance.rtol, report.tolerance.atol);
  std::printf("%-16s %4s %6s  %-6s %13s %13s  %s\n", "method", "case", "output", "result",
              "max abs err", "max rel err", "mismatched");
  for (const CaseResult& c : report.cases) {
    if (!c.status.ok()) {
      std::printf("%-16s %4zu %6s  %-6s %s\n", c.method.c_str(), c.case_index, "-", "ERROR",
                  c.status.to_string().c_str());
      continue;
    }
    for (const OutputCheck& o : c.outputs) {
      if (!o.problem.empty()) {
        std::printf("%-16s %4zu %6zu  %-6s %s\n", c.method.c_str(), c.case_index, o.index, "FAIL",
                    o.problem.c_str());
        continue;
      }
      std::printf("%-16s %4zu %6zu  %-6s %13.3g %13.3g  %zu/%zu\n", c.method.c_str(), c.case_index,
                  o.index, o.passed ? "pass" : "FAIL", o.max_abs_error, o.max_rel_error,
                  o.mismatched, o.elements);
    }
  }
  std::printf("%zu of %zu case(s) passed\n", report.num_passed(), report.cases.size());
  return report.passed() ? 0 : 3;
}

// An input read from a file, in the memory the method will read.
struct LoadedInput {
  NpyArray array;
  std::vector<uint8_t> relaid;  // the values in the method's dim order, when not C order
  std::vector<int64_t> strides;
  InputValue value;
};

Result<InputValue> scalar_input(size_t index, const NpyArray& a, ValueKind want) {
  if (!a.shape.empty()) {
    return invalid_argument(fmt::format("input {} is a {} input: give a 0-d .npy, not shape {}",
                                        index, value_kind_name(want), shape_string(a.shape)));
  }
  const void* p = a.data.data();
  int64_t i = 0;
  double d = 0;
  switch (a.dtype) {
    case ScalarType::kLong:
      std::memcpy(&i, p, 8);
      d = static_cast<double>(i);
      break;
    case ScalarType::kInt: {
      int32_t v;
      std::memcpy(&v, p, 4);
      i = v;
      d = v;
      break;
    }
    case ScalarType::kDouble:
      std::memcpy(&d, p, 8);
      break;
    case ScalarType::kFloat: {
      float v;
      std::memcpy(&v, p, 4);
      d = v;
      break;
    }
    case ScalarType::kBool:
      i = a.data[0] != 0;
      break;
    default:
      return invalid_argument(fmt::format("input {}: a {} .npy cannot give a {} input", index,
                                          scalar_type_name(a.dtype), value_kind_name(want)));
  }
  const bool integral = a.dtype == ScalarType::kLong || a.dtype == ScalarType::kInt;
  const bool floating = a.dtype == ScalarType::kDouble || a.dtype == ScalarType::kFloat;
  if (want == ValueKind::kInt && integral) return InputValue::of_int(i);
  if (want == ValueKind::kDouble && floating) return InputValue::of_double(d);
  if (want == ValueKind::kBool && a.dtype == ScalarType::kBool) return InputValue::of_bool(i != 0);
  return invalid_argument(fmt::format("input {} is a {} input but the .npy holds {}", index,
                                      value_kind_name(want), scalar_type_name(a.dtype)));
}

Status load_input(size_t index, const std::string& path, const ValueMeta& meta, LoadedInput& in) {
  ET_ASSIGN_OR_RETURN(in.array, read_npy(path));
  if (meta.kind != ValueKind::kTensor) {
    ET_ASSIGN_OR_RETURN(in.value, scalar_input(index, in.array, meta.kind));
    return Status();
  }
  NpyArray& a = in.array;
  ScalarType dtype = a.dtype;
  if (meta.tensor->dtype == ScalarType::kBFloat16 && dtype == ScalarType::kUInt16) {
    dtype = ScalarType::kBFloat16;  // bit patterns: bfloat16 has no .npy type
  }
  TensorView view;
  view.dtype = dtype;
  view.sizes = a.shape;
  view.data = a.data.data();
  view.nbytes = a.data.size();
  const auto& order = meta.tensor->dim_order;
  bool identity = true;
  for (size_t d = 0; d < order.size(); ++d) identity &= order[d] == d;
  if (!identity && order.size() == a.shape.size()) {
    in.strides.resize(a.shape.size());
    strides_for_dim_order(a.shape, order, in.strides);
    std::vector<int64_t> c_strides(a.shape.size());
    std::vector<uint8_t> c_order(a.shape.size());
    for (size_t d = 0; d < c_order.size(); ++d) c_order[d] = static_cast<uint8_t>(d);
    strides_for_dim_order(a.shape, c_order, c_strides);
    in.relaid.resize(a.data.size());
    copy_strided(a.data.data(), c_strides, in.relaid.data(), in.strides, a.shape,
                 element_size(dtype));
    view.data = in.relaid.data();
    view.strides = in.strides;
    std::fprintf(stderr, "et-run: input %zu copied into the method's layout %s\n", index,
                 dim_order_string(order).c_str());
  }
  in.value = InputValue::of_tensor(view);
  return Status();
}

Status write_output(size_t index, const Value& v, const std::string& dir) {
  const std::string path = fmt::format("{}/{}.npy", dir, index);
  switch (v.kind()) {
    case ValueKind::kTensor: {
      const Tensor& t = v.to_tensor();
      std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
      std::vector<uint8_t> c_data(t.nbytes());
      std::vector<int64_t> c_strides(sizes.size());
      std::vector<uint8_t> c_order(sizes.size());
      for (size_t d = 0; d < c_order.size(); ++d) c_order[d] = static_cast<uint8_t>(d);
      strides_for_dim_order(sizes, c_order, c_strides);
      if (t.nbytes() > 0) {
        copy_strided(t.data(), t.strides(), c_data.data(), c_strides, sizes, t.element_size());
      }
      return write_npy(path, t.dtype(), sizes, c_data.data());
    }
    case ValueKind::kInt: {
      const int64_t x = v.to_int();
      return write_npy(path, ScalarType::kLong, {}, &x);
    }
    case ValueKind::kDouble: {
      const double x = v.to_double();
      return write_npy(path, ScalarType::kDouble, {}, &x);
    }
    case ValueKind::kBool: {
      const bool x = v.to_bool();
      return write_npy(path, ScalarType::kBool, {}, &x);
    }
    default:
      return not_supported(fmt::format("output {} is a {}, which .npy cannot hold", index,
                                       value_kind_name(v.kind())));
  }
}

int run_generate(Method& m, const GenerationOptions& options) {
  GenerationBuffers buffers;
  std::vector<int64_t> tokens;
  auto stats = generate(
      m, options, buffers, [&] { return m.execute(); },
      [&](int64_t t) {
        tokens.push_back(t);
        return true;
      });
  if (!stats.ok()) return fail(stats.status());
  std::printf("tokens %s\n", fmt::format("{}", fmt::join(tokens, ",")).c_str());
  const double prefill_s = static_cast<double>(stats->prefill_ns) * 1e-9;
  const double decode_s = static_cast<double>(stats->decode_ns) * 1e-9;
  std::printf(
      "prefill %u tokens in %.3f ms (%.1f tokens/s); decode %u tokens in %.3f ms "
      "(%.1f tokens/s); stopped: %s\n",
      stats->prompt_tokens, prefill_s * 1e3, stats->prompt_tokens / prefill_s, stats->generated - 1,
      decode_s * 1e3, stats->generated > 1 ? (stats->generated - 1) / decode_s : 0.0,
      stats->stop_reason.c_str());
  return 0;
}

int run(const Options& opt) {
  if (opt.list_ops) {
    for (const std::string& name : KernelRegistry::global().names())
      std::printf("%s\n", name.c_str());
    return 0;
  }
  if (opt.list_backends) {
    for (const std::string& id : BackendRegistry::global().ids()) std::printf("%s\n", id.c_str());
    return 0;
  }
  auto program = Program::load_file(opt.model, opt.data);
  if (!program.ok()) return fail(program.status());
  if (opt.info) {
    print_info(**program, opt.model);
    return 0;
  }
  if (opt.verify) {
    VerifyOptions options;
    options.tolerance = opt.tolerance;
    if (opt.method_given) options.method = opt.method;
    auto report = verify_bundled(*program, options);
    if (!report.ok()) return fail(report.status().with_context(opt.model));
    return print_verify_report(*report, opt.model);
  }
  auto method = Method::load(*program, opt.method);
  if (!method.ok()) return fail(method.status());
  Method& m = **method;
  if (opt.generate) {
    GenerationOptions options = opt.generation;
    options.max_context = program_max_context(*program);  // the bound the program states
    return run_generate(m, options);
  }
  if (opt.inputs.size() != m.num_inputs()) {
    return fail(invalid_argument(fmt::format("method '{}' takes {} input(s); {} --input given",
                                             opt.method, m.num_inputs(), opt.inputs.size())));
  }
  std::vector<LoadedInput> loaded(opt.inputs.size());
  std::vector<InputValue> values;
  for (size_t i = 0; i < opt.inputs.size(); ++i) {
    if (Status s = load_input(i, opt.inputs[i], m.meta().inputs[i], loaded[i]); !s.ok())
      return fail(s);
    values.push_back(loaded[i].value);
  }
  if (Status s = m.set_inputs(values); !s.ok()) return fail(s);
  std::vector<std::vector<uint8_t>> output_buffers(m.num_outputs());
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const ValueMeta& o = m.meta().outputs[i];
    if (o.tensor && !o.tensor->is_memory_planned && !m.output_is_input(i)) {
      output_buffers[i].resize(o.tensor->nbytes == 0 ? 1 : o.tensor->nbytes);
      Status s = m.set_output_buffer(i, output_buffers[i].data(), output_buffers[i].size());
      if (!s.ok()) return fail(s);
    }
  }
  std::vector<ExecuteProfile> profiles;
  for (int r = 0; r < opt.repeat; ++r) {
    ExecuteProfile* profile = opt.profile.wanted() ? &profiles.emplace_back() : nullptr;
    if (Status s = m.execute({}, profile); !s.ok()) return fail(s);
  }
  if (opt.profile.wanted()) {
    if (Status s = write_profile_outputs(profiles, opt.profile, "et-run"); !s.ok()) return fail(s);
  }
  std::error_code ec;
  std::filesystem::create_directories(opt.output_dir, ec);
  if (ec)
    return fail(io_error(fmt::format("cannot create '{}': {}", opt.output_dir, ec.message())));
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    auto out = m.output(i);
    if (!out.ok()) return fail(out.status());
    if (Status s = write_output(i, **out, opt.output_dir); !s.ok()) return fail(s);
  }
  std::fprintf(stderr, "et-run: %s.%s: %zu output(s) written to %s\n", opt.model.c_str(),
               opt.method.c_str(), m.num_outputs(), opt.output_dir.c_str());
  return 0;
}

}  // namespace
}  // namespace et::tools

int main(int argc, char** argv) {
  using et::tools::usage_error;
  et::tools::Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::printf("%s", et::tools::kUsage);
      return 0;
    } else if (arg == "--info") {
      opt.info = true;
    } else if (arg == "--profile") {
      opt.profile.table = stdout;
    } else if (arg == "--repeat" || arg == "--trace" || arg == "--etdump") {
      const char* v = value(arg.c_str());
      if (v == nullptr) return usage_error(arg + " needs a value");
      if (arg == "--trace") opt.profile.trace_path = v;
      if (arg == "--etdump") opt.profile.etdump_path = v;
      if (arg == "--repeat") {
        char* end = nullptr;
        const long n = std::strtol(v, &end, 10);
        if (end == v || *end != '\0' || n < 1 || n > 1'000'000) {
          return usage_error("--repeat needs a count from 1 to 1000000");
        }
        opt.repeat = static_cast<int>(n);
      }
    } else if (arg == "--generate" || arg == "--max-new-tokens" || arg == "--stop" ||
               arg == "--temperature" || arg == "--top-p" || arg == "--seed") {
      const char* v = value(arg.c_str());
      if (v == nullptr) return usage_error(arg + " needs a value");
      const std::string text = v;
      auto number = [&](double lo, double hi, double* out) {
        char* end = nullptr;
        *out = std::strtod(text.c_str(), &end);
        return end != text.c_str() && *end == '\0' && *out >= lo && *out <= hi;
      };
      double x = 0;
      et::GenerationOptions& g = opt.generation;
      if (arg == "--generate") {
        opt.generate = true;
        for (size_t at = 0; at <= text.size();) {
          const size_t comma = std::min(text.find(',', at), text.size());
          char* end = nullptr;
          const std::string id = text.substr(at, comma - at);
          const long long t = std::strtoll(id.c_str(), &end, 10);
          if (id.empty() || *end != '\0' || t < 0) {
            return usage_error("--generate needs comma-separated token ids, e.g. 1,15,20");
          }
          g.prompt.push_back(t);
          at = comma + 1;
        }
      } else if (arg == "--max-new-tokens") {
        if (!number(0, 1 << 20, &x)) return usage_error("--max-new-tokens needs 0 .. 1048576");
        g.max_new_tokens = static_cast<uint32_t>(x);
        opt.max_new_tokens_given = true;
      } else if (arg == "--stop") {
        if (!number(0, 9e15, &x)) return usage_error("--stop needs a token id");
        g.stop_tokens.push_back(static_cast<int64_t>(x));
      } else if (arg == "--temperature") {
        if (!number(0, 1e6, &x)) return usage_error("--temperature needs a number >= 0");
        g.temperature = static_cast<float>(x);
      } else if (arg == "--top-p") {
        if (!number(0, 1, &x)) return usage_error("--top-p needs a number from 0 to 1");
        g.top_p = x == 0 ? 1.0f : static_cast<float>(x);
      } else {
        if (!number(0, 1.8e19, &x)) return usage_error("--seed needs a number >= 0");
        g.seed = static_cast<uint64_t>(x);
      }
    } else if (arg == "--verify") {
      opt.verify = true;
    } else if (arg == "--rtol" || arg == "--atol") {
      const char* v = value(arg.c_str());
      char* end = nullptr;
      const double x = v == nullptr ? 0 : std::strtod(v, &end);
      if (v == nullptr || end == v || *end != '\0' || !(x >= 0)) {
        return usage_error(arg + " needs a number of zero or more");
      }
      (arg == "--rtol" ? opt.tolerance.rtol : opt.tolerance.atol) = x;
    } else if (arg == "--list-ops") {
      opt.list_ops = true;
    } else if (arg == "--list-backends") {
      opt.list_backends = true;
    } else if (arg == "--method" || arg == "--input" || arg == "--output-dir" || arg == "--data") {
      const char* v = value(arg.c_str());
      if (v == nullptr) return usage_error(arg + " needs a value");
      if (arg == "--data") opt.data = v;
      if (arg == "--method") {
        opt.method = v;
        opt.method_given = true;
      }
      if (arg == "--input") opt.inputs.emplace_back(v);
      if (arg == "--output-dir") opt.output_dir = v;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error("unknown option " + arg);
    } else if (opt.model.empty()) {
      opt.model = arg;
    } else {
      return usage_error("more than one model given: " + opt.model + ", " + arg);
    }
  }
  if (opt.model.empty() && !opt.list_ops && !opt.list_backends)
    return usage_error("no model given");
  if (opt.generate && !opt.max_new_tokens_given) {
    opt.generation.max_new_tokens = 32;
  }
  return et::tools::run(opt);
}
