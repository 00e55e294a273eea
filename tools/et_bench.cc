// et-bench: median latency of one method of a .pte program, in this process.
//
//   et-bench MODEL.pte [--data FILE.ptd] [--method NAME] [--input FILE.npy]... [--warmup N]
//   [--iterations N]
//            [--instances N] [--hz N] [--profile] [--trace FILE.json] [--etdump FILE.etdp]
//
// --hz N paces the timed calls at N per second (as a control loop would call), instead
// of back to back.
// Inputs default to zeros of the declared shapes. Prints one JSON line:
// {"model": ..., "method": ..., "iterations": N, "median_ms": ..., "min_ms": ..., "p90_ms": ...,
// "p99_ms": ..., "max_ms": ...}
// --profile times every operator, delegate call and delegate step of the timed
// iterations and prints the table on stderr (the latencies above are then profiled
// ones); --trace and --etdump write them as Chrome trace JSON and as an ETDump.
// With --instances N it then loads N-1 more instances of the method, executes each
// once, and adds "instances", "rss_mb_one" (resident memory with the first instance)
// and "rss_mb_all" (with all N): what sharing per-program work saves.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/core/program.h"
#include "tools/npy.h"
#include "tools/profile_output.h"

namespace {

int fail(const et::Status& s) {
  std::fprintf(stderr, "et-bench: %s\n", s.to_string().c_str());
  return 1;
}

// The smallest of the sorted values with a fraction p of them at or below it.
double nearest_rank(const std::vector<double>& sorted, double p) {
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// Resident set size of this process in MiB (VmRSS), or -1 when unreadable.
double rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      double kb = 0;
      status >> kb;
      return kb / 1024.0;
    }
    status.ignore(1 << 16, '\n');
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model, data, method = "forward";
  std::vector<std::string> input_files;
  int warmup = 3, iterations = 20, instances = 0;
  double hz = 0;
  et::tools::ProfileOutputs profile;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--method") {
      method = next();
    } else if (arg == "--data") {
      data = next();
    } else if (arg == "--input") {
      input_files.push_back(next());
    } else if (arg == "--warmup") {
      warmup = std::stoi(next());
    } else if (arg == "--iterations") {
      iterations = std::max(1, std::stoi(next()));
    } else if (arg == "--hz") {
      hz = std::max(0.0, std::stod(next()));
    } else if (arg == "--profile") {
      profile.table = stderr;
    } else if (arg == "--trace") {
      profile.trace_path = next();
    } else if (arg == "--etdump") {
      profile.etdump_path = next();
    } else if (arg == "--instances") {
      instances = std::max(1, std::stoi(next()));
    } else if (arg == "-h" || arg == "--help") {
      std::printf(
          "usage: et-bench MODEL.pte [--data FILE.ptd] [--method NAME] [--input FILE.npy]... "
          "[--warmup N] "
          "[--iterations N] [--instances N] [--hz N] [--profile] [--trace FILE.json] "
          "[--etdump FILE.etdp]\n");
      return 0;
    } else {
      model = arg;
    }
  }
  if (model.empty()) {
    std::fprintf(stderr, "et-bench: no model given (see --help)\n");
    return 2;
  }
  auto program = et::Program::load_file(model, data);
  if (!program.ok()) return fail(program.status());
  auto loaded = et::Method::load(*program, method);
  if (!loaded.ok()) return fail(loaded.status());
  et::Method& m = **loaded;

  std::vector<et::tools::NpyArray> arrays(m.num_inputs());
  std::vector<std::vector<int64_t>> shapes(m.num_inputs());
  std::vector<et::InputValue> inputs;
  for (size_t i = 0; i < m.num_inputs(); ++i) {
    const et::ValueMeta& meta = m.meta().inputs[i];
    if (meta.kind != et::ValueKind::kTensor) {
      inputs.push_back(
          meta.kind == et::ValueKind::kInt      ? et::InputValue::of_int(meta.traced.to_int())
          : meta.kind == et::ValueKind::kDouble ? et::InputValue::of_double(meta.traced.to_double())
                                                : et::InputValue::of_bool(meta.traced.to_bool()));
      continue;
    }
    if (i < input_files.size()) {
      auto a = et::tools::read_npy(input_files[i]);
      if (!a.ok()) return fail(a.status());
      arrays[i] = std::move(*a);
      if (meta.tensor->dtype == et::ScalarType::kBFloat16)
        arrays[i].dtype = et::ScalarType::kBFloat16;
    } else {
      arrays[i].dtype = meta.tensor->dtype;
      arrays[i].shape.assign(meta.tensor->sizes.begin(), meta.tensor->sizes.end());
      arrays[i].data.assign(meta.tensor->nbytes, 0);
    }
    et::TensorView view;
    view.data = arrays[i].data.data();
    view.nbytes = arrays[i].data.size();
    view.dtype = arrays[i].dtype;
    view.sizes = arrays[i].shape;
    inputs.push_back(et::InputValue::of_tensor(view));
  }
  std::vector<std::vector<uint8_t>> outputs(m.num_outputs());
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const et::ValueMeta& o = m.meta().outputs[i];
    if (o.tensor && !o.tensor->is_memory_planned && !m.output_is_input(i)) {
      outputs[i].resize(o.tensor->nbytes + 1);
      if (et::Status s = m.set_output_buffer(i, outputs[i].data(), outputs[i].size()); !s.ok())
        return fail(s);
    }
  }
  std::vector<double> ms;
  std::vector<et::ExecuteProfile> profiles;
  auto next_tick = std::chrono::steady_clock::now();
  for (int i = 0; i < warmup + iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (et::Status s = m.set_inputs(inputs); !s.ok()) return fail(s);
    et::ExecuteProfile* profiled =
        profile.wanted() && i >= warmup ? &profiles.emplace_back() : nullptr;
    if (et::Status s = m.execute({}, profiled); !s.ok()) return fail(s);
    const auto end = std::chrono::steady_clock::now();
    if (i >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    if (hz > 0) {
      next_tick += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(1.0 / hz));
      std::this_thread::sleep_until(next_tick);
    }
  }
  std::sort(ms.begin(), ms.end());
  if (profile.wanted()) {
    if (et::Status s = et::tools::write_profile_outputs(profiles, profile, "et-bench"); !s.ok())
      return fail(s);
  }
  std::string memory;
  if (instances > 0) {
    const double one = rss_mb();
    std::vector<std::unique_ptr<et::Method>> more;
    for (int i = 1; i < instances; ++i) {
      auto extra = et::Method::load(*program, method);
      if (!extra.ok()) return fail(extra.status());
      if (et::Status s = (*extra)->set_inputs(inputs); !s.ok()) return fail(s);
      if (et::Status s = (*extra)->execute(); !s.ok()) return fail(s);
      more.push_back(std::move(extra).value());
    }
    memory = fmt::format(R"(, "instances": {}, "rss_mb_one": {:.1f}, "rss_mb_all": {:.1f})",
                         instances, one, rss_mb());
  }
  std::printf(
      "%s\n",
      fmt::format(R"({{"model": "{}", "method": "{}", "iterations": {}, "median_ms": {:.6f}, )"
                  R"("min_ms": {:.6f}, "p90_ms": {:.6f}, "p99_ms": {:.6f}, "max_ms": {:.6f}{}}})",
                  model, method, iterations, ms[ms.size() / 2], ms.front(), nearest_rank(ms, 0.9),
                  nearest_rank(ms, 0.99), ms.back(), memory)
          .c_str());
  return 0;
}
