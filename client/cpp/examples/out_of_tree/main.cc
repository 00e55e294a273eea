// hello: the smallest program on the installed libetclient. Loads a model into
// et-serverd, runs its first method with inputs of ones, prints each output.
//
//   hello MODEL.pte [SOCKET]
#include <etclient/client.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: hello MODEL.pte [SOCKET]\n");
    return 2;
  }
  etclient::Client::Options options;
  if (argc > 2) options.socket = argv[2];
  auto client = etclient::Client::connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "hello: %s\n", client.status().message().c_str());
    return 1;
  }
  auto program = (*client)->load_program(argv[1]);
  if (!program.ok()) {
    std::fprintf(stderr, "hello: %s\n", program.status().message().c_str());
    return 1;
  }
  auto method = (*program)->load_method((*program)->methods().at(0).name);
  if (!method.ok()) {
    std::fprintf(stderr, "hello: %s\n", method.status().message().c_str());
    return 1;
  }
  // Inputs in shared memory (zero copy), filled with ones of each input's dtype (float).
  std::vector<etclient::Input> inputs;
  for (const auto& in : (*method)->meta().inputs) {
    if (!in.tensor || in.tensor->dtype != etclient::DType::kFloat32) {
      std::fprintf(stderr, "hello: this example feeds float32 tensors only\n");
      return 1;
    }
    auto t = (*client)->empty(in.tensor->dtype, in.tensor->sizes);
    if (!t.ok()) {
      std::fprintf(stderr, "hello: %s\n", t.status().message().c_str());
      return 1;
    }
    for (size_t i = 0; i < t->numel(); ++i) t->data_as<float>()[i] = 1.0f;
    inputs.emplace_back(*t);
  }
  auto outputs = (*method)->execute(inputs);
  if (!outputs.ok()) {
    std::fprintf(stderr, "hello: %s\n", outputs.status().message().c_str());
    return 1;
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const etclient::SharedTensor& out = (*outputs)[i];
    std::printf("output %zu: %s [", i, etclient::dtype_name(out.dtype()));
    for (int64_t s : out.sizes()) std::printf(" %lld", static_cast<long long>(s));
    std::printf(" ] first %g\n", out.numel() ? double(out.data_as<float>()[0]) : 0.0);
  }
  return 0;
}
