// robot_node: what a robot's control loop does with libetclient. Connects to
// et-serverd, loads a model, and runs it at a fixed rate with the input in shared
// memory and the results written into output buffers made once (no allocation per
// call), over the fast path (a shared-memory channel) unless told otherwise, then
// prints round-trip latency percentiles.
//
//   robot_node MODEL.pte [--hz N] [--seconds S] [--socket PATH] [--transport fast|grpc]
//              [--fresh-outputs] [--warmup N] [--start-at UNIX_SECONDS]
//              [--rt fifo:PRIORITY] [--rt-cpus LIST] [--deadline-us N]
//
// --hz 0 runs free (back to back). --fresh-outputs gives each call new output slots
// instead. --warmup N untimed calls come first (default 10). --start-at waits after the
// warm-up until that wall-clock time, so that several nodes measure the same window. --rt
// runs the loop's thread in a real-time class (etclient::enter_realtime_class), pinned
// to --rt-cpus when given. --deadline-us gives each call that deadline
// (Method::set_deadline) and reports the calls that missed it. Inputs are
// zeros of each input's declared shape (a real node would fill the shared tensor from its sensor).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "etclient/client.h"

int main(int argc, char** argv) {
  std::string model, socket, transport = "fast";
  double hz = 100, seconds = 5;
  bool fresh_outputs = false;
  int warmup = 10;
  double start_at = 0;
  std::string rt, rt_cpus;
  long deadline_us = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--hz")
      hz = std::stod(next());
    else if (a == "--seconds")
      seconds = std::stod(next());
    else if (a == "--socket")
      socket = next();
    else if (a == "--transport")
      transport = next();
    else if (a == "--fresh-outputs")
      fresh_outputs = true;
    else if (a == "--warmup")
      warmup = std::stoi(next());
    else if (a == "--start-at")
      start_at = std::stod(next());
    else if (a == "--rt")
      rt = next();
    else if (a == "--rt-cpus")
      rt_cpus = next();
    else if (a == "--deadline-us")
      deadline_us = std::stol(next());
    else
      model = a;
  }
  if (model.empty() || hz < 0 || warmup < 0 || deadline_us < 0 ||
      (transport != "fast" && transport != "grpc")) {
    std::fprintf(stderr,
                 "usage: robot_node MODEL.pte [--hz N] [--seconds S] [--socket PATH] "
                 "[--transport fast|grpc] [--fresh-outputs] [--warmup N] [--start-at UNIX_SECONDS] "
                 "[--rt fifo:PRIORITY] [--rt-cpus LIST] [--deadline-us N]\n");
    return 2;
  }
  if (rt.empty() && !rt_cpus.empty()) {
    std::fprintf(stderr, "robot_node: --rt-cpus goes with --rt fifo:PRIORITY\n");
    return 2;
  }
  // Tried on a thread of its own before anything else (a refusal ends the node at
  // once); entered on this thread for the loop, once connected and loaded, so the
  // threads those start (gRPC's, an auto-started daemon) keep their own CPUs.
  if (!rt.empty()) {
    etclient::Status allowed;
    std::thread([&] { allowed = etclient::enter_realtime_class(rt, rt_cpus); }).join();
    if (!allowed.ok()) {
      std::fprintf(stderr, "robot_node: --rt: %s\n", allowed.message().c_str());
      return 2;
    }
  }
  etclient::ClientOptions options;
  options.socket = socket;
  options.client_name = "robot_node";
  if (transport == "grpc") options.transport = etclient::Transport::kGrpc;
  auto client = etclient::Client::connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "robot_node: %s\n", client.status().message().c_str());
    return 1;
  }
  auto program = (*client)->load_program(model);
  if (!program.ok()) {
    std::fprintf(stderr, "robot_node: %s\n", program.status().message().c_str());
    return 1;
  }
  auto method = (*program)->load_method();
  if (!method.ok()) {
    std::fprintf(stderr, "robot_node: %s\n", method.status().message().c_str());
    return 1;
  }
  std::vector<etclient::Input> inputs;
  for (const etclient::ValueMeta& in : (*method)->meta().inputs) {
    if (!in.tensor) {
      std::fprintf(stderr, "robot_node: only tensor inputs are supported here\n");
      return 1;
    }
    auto t = (*client)->empty(in.tensor->dtype, in.tensor->sizes);
    if (!t.ok()) {
      std::fprintf(stderr, "robot_node: %s\n", t.status().message().c_str());
      return 1;
    }
    std::memset(t->data(), 0, t->nbytes());
    inputs.emplace_back(*t);
  }
  auto buffers = (*method)->output_buffers();
  if (!buffers.ok()) {
    std::fprintf(stderr, "robot_node: %s\n", buffers.status().message().c_str());
    return 1;
  }
  std::vector<etclient::SharedTensor> outputs = std::move(buffers).value();
  if (!rt.empty()) (void)etclient::enter_realtime_class(rt, rt_cpus);  // allowed: tried above
  for (int i = 0; i < warmup; ++i) {
    if (etclient::Status s = (*method)->execute(inputs, outputs); !s.ok()) {
      std::fprintf(stderr, "robot_node: %s\n", s.message().c_str());
      return 1;
    }
  }
  (*method)->set_deadline(std::chrono::microseconds(deadline_us));  // counted from here
  double late_ms = 0;
  if (start_at > 0) {
    const auto at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(start_at)));
    late_ms =
        std::chrono::duration<double, std::milli>(std::chrono::system_clock::now() - at).count();
    std::this_thread::sleep_until(at);
  }
  const auto period = std::chrono::duration<double>(hz > 0 ? 1.0 / hz : 0.0);
  std::vector<double> us;
  us.reserve(static_cast<size_t>(std::max(1.0, (hz > 0 ? hz : 200'000) * seconds)));
  const auto begin = std::chrono::steady_clock::now();
  const auto end_at = begin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(seconds));
  auto next_tick = begin;
  while (std::chrono::steady_clock::now() < end_at || us.empty()) {
    const auto start = std::chrono::steady_clock::now();
    etclient::Status s;
    if (fresh_outputs) {
      auto out = (*method)->execute(inputs);
      s = out.status();
    } else {
      s = (*method)->execute(inputs, outputs);
    }
    const auto end = std::chrono::steady_clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "robot_node: %s\n", s.message().c_str());
      return 1;
    }
    us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    if (hz > 0) {
      next_tick += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
      std::this_thread::sleep_until(next_tick);
    }
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::sort(us.begin(), us.end());
  auto pct = [&](double p) {  // nearest rank: the smallest value with p of them at or below
    const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(us.size())));
    return us[std::clamp<size_t>(rank, 1, us.size()) - 1];
  };
  std::printf(
      "{\"model\": \"%s\", \"transport\": \"%s\", \"hz\": %.0f, \"calls\": %zu, "
      "\"calls_per_s\": %.0f, \"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, "
      "\"max_us\": %.1f, \"late_ms\": %.1f, \"deadline_misses\": %llu, "
      "\"deadline_misses_in_daemon\": %llu}\n",
      model.c_str(), (*method)->transport(), hz, us.size(), static_cast<double>(us.size()) / wall_s,
      pct(0.5), pct(0.9), pct(0.99), us.back(), std::max(0.0, late_ms),
      static_cast<unsigned long long>((*method)->deadline_misses().missed),
      static_cast<unsigned long long>((*method)->deadline_misses().in_daemon));
  return 0;
}
