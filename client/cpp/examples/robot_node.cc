// robot_node: what a robot's control loop does with libetclient. Connects to
// et-serverd, loads a model, and runs it at a fixed rate with the input in shared
// memory, then prints round-trip latency percentiles.
//
//   robot_node MODEL.pte [--hz N] [--seconds S] [--socket PATH]
//
// Inputs are zeros of each input's declared shape (a real node would fill the
// shared tensor from its sensor).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "etclient/client.h"

int main(int argc, char** argv) {
  std::string model, socket;
  double hz = 100, seconds = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--hz")
      hz = std::stod(next());
    else if (a == "--seconds")
      seconds = std::stod(next());
    else if (a == "--socket")
      socket = next();
    else
      model = a;
  }
  if (model.empty() || hz <= 0) {
    std::fprintf(stderr, "usage: robot_node MODEL.pte [--hz N] [--seconds S] [--socket PATH]\n");
    return 2;
  }
  auto client = etclient::Client::connect({socket, "robot_node"});
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
  const auto period = std::chrono::duration<double>(1.0 / hz);
  const int ticks = std::max(1, static_cast<int>(hz * seconds));
  std::vector<double> us;
  auto next_tick = std::chrono::steady_clock::now();
  for (int i = 0; i < ticks; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto out = (*method)->execute(inputs);
    const auto end = std::chrono::steady_clock::now();
    if (!out.ok()) {
      std::fprintf(stderr, "robot_node: %s\n", out.status().message().c_str());
      return 1;
    }
    us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    next_tick += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
    std::this_thread::sleep_until(next_tick);
  }
  std::sort(us.begin(), us.end());
  auto pct = [&](double p) {
    return us[std::min(us.size() - 1, static_cast<size_t>(p * us.size()))];
  };
  std::printf(
      "{\"model\": \"%s\", \"hz\": %.0f, \"calls\": %zu, \"p50_us\": %.1f, \"p90_us\": %.1f, "
      "\"p99_us\": %.1f, \"max_us\": %.1f}\n",
      model.c_str(), hz, us.size(), pct(0.5), pct(0.9), pct(0.99), us.back());
  return 0;
}
