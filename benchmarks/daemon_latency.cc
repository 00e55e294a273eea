// daemon-latency: round-trip latency of Run through a running et-serverd over its Unix
// socket (gRPC), for one small program, as a client sees it.
//
//   daemon-latency --socket PATH MODEL.pte --input FILE.npy [--iterations N] [--warmup N]
//
// Prints one JSON line: {"model", "iterations", "p50_us", "p90_us", "p99_us", "min_us",
// "server_execute_p50_us"}.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/daemon.h"

namespace pb = ::etserver::v1;

int main(int argc, char** argv) {
  std::string socket, model, input;
  int iterations = 2000, warmup = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--socket")
      socket = next();
    else if (a == "--input")
      input = next();
    else if (a == "--iterations")
      iterations = std::stoi(next());
    else if (a == "--warmup")
      warmup = std::stoi(next());
    else
      model = a;
  }
  if (socket.empty() || model.empty() || input.empty()) {
    std::fprintf(stderr,
                 "usage: daemon-latency --socket PATH MODEL.pte --input FILE.npy "
                 "[--iterations N] [--warmup N]\n");
    return 2;
  }
  et::testing::TestClient client(socket);
  std::string error;
  const uint64_t program = client.load_program_file(model, &error);
  const uint64_t method = program ? client.load_method(program, "forward", &error) : 0;
  if (!method) {
    std::fprintf(stderr, "daemon-latency: %s\n", error.c_str());
    return 1;
  }
  pb::RunRequest req;
  req.set_session(client.session());
  req.set_method_handle(method);
  *req.add_inputs()->mutable_tensor() = et::testing::npy_tensor(input);
  *req.add_inputs()->mutable_tensor() = et::testing::npy_tensor(input);
  std::vector<double> us, server_us;
  pb::RunResponse resp;
  for (int i = 0; i < warmup + iterations; ++i) {
    // The add fixture takes two inputs; a one-input model ignores the second below.
    grpc::ClientContext ctx;
    const auto start = std::chrono::steady_clock::now();
    grpc::Status s = client.stub().Run(&ctx, req, &resp);
    const auto end = std::chrono::steady_clock::now();
    if (!s.ok() && i == 0 && s.error_message().find("inputs:") != std::string::npos) {
      req.mutable_inputs()->RemoveLast();
      --i;
      continue;
    }
    if (!s.ok()) {
      std::fprintf(stderr, "daemon-latency: Run: %s\n", s.error_message().c_str());
      return 1;
    }
    if (i >= warmup) {
      us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
      server_us.push_back(static_cast<double>(resp.execution_micros()));
    }
  }
  std::sort(us.begin(), us.end());
  std::sort(server_us.begin(), server_us.end());
  auto pct = [](const std::vector<double>& v, double p) {
    return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
  };
  std::printf("%s\n", fmt::format(R"({{"model": "{}", "iterations": {}, "p50_us": {:.1f}, )"
                                  R"("p90_us": {:.1f}, "p99_us": {:.1f}, "min_us": {:.1f}, )"
                                  R"("server_execute_p50_us": {:.1f}}})",
                                  model, iterations, pct(us, 0.5), pct(us, 0.9), pct(us, 0.99),
                                  us.front(), pct(server_us, 0.5))
                          .c_str());
  return 0;
}
