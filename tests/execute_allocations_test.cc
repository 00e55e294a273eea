// A steady-state execute allocates nothing (issue 43, the real-time class): once a
// method has run a few times, its executes take no memory from the heap, on any thread
// (the compute pool's workers and XNNPACK included). The test executable replaces
// malloc and its relatives; each forwards to glibc's and counts while counting is on.
// Not built under the sanitizers, which own malloc.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/core/program.h"
#include "runtime/core/thread_pool.h"

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* p);
}

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};

void count() {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

extern "C" {
void* malloc(size_t size) noexcept {
  count();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) noexcept {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t size) noexcept {
  count();
  return __libc_realloc(p, size);
}
void* aligned_alloc(size_t alignment, size_t size) noexcept {
  count();
  return __libc_memalign(alignment, size);
}
void* memalign(size_t alignment, size_t size) noexcept {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  count();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
void free(void* p) noexcept { __libc_free(p); }
}

namespace et {
namespace {

// Allocations made by `calls` executes of `model`'s forward after `warmup` untimed ones,
// with zeros of each input's declared shape.
uint64_t allocations_in_steady_state(const std::string& model, int warmup, int calls) {
  auto program = Program::load_file(std::string(ET_FIXTURES_DIR) + "/" + model + ".pte");
  EXPECT_TRUE(program.ok()) << program.status().to_string();
  if (!program.ok()) return UINT64_MAX;
  auto loaded = Method::load(*program, "forward");
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  if (!loaded.ok()) return UINT64_MAX;
  Method& method = **loaded;
  std::vector<std::vector<uint8_t>> data(method.num_inputs());
  std::vector<std::vector<int64_t>> sizes(method.num_inputs());
  std::vector<InputValue> inputs;
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    const ValueMeta& meta = method.meta().inputs[i];
    EXPECT_EQ(meta.kind, ValueKind::kTensor) << model;
    data[i].assign(meta.tensor->nbytes, 0);
    sizes[i].assign(meta.tensor->sizes.begin(), meta.tensor->sizes.end());
    TensorView view;
    view.data = data[i].data();
    view.nbytes = data[i].size();
    view.dtype = meta.tensor->dtype;
    view.sizes = sizes[i];
    inputs.push_back(InputValue::of_tensor(view));
  }
  auto run = [&] {
    Status s = method.set_inputs(inputs);
    if (s.ok()) s = method.execute();
    return s;
  };
  for (int i = 0; i < warmup; ++i) {
    const Status s = run();
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
  g_allocations.store(0);
  g_counting.store(true);
  bool ok = true;
  for (int i = 0; i < calls && ok; ++i) ok = run().ok();
  g_counting.store(false);
  EXPECT_TRUE(ok) << model;
  return g_allocations.load();
}

class ExecuteAllocations : public ::testing::TestWithParam<const char*> {};

TEST_P(ExecuteAllocations, NoneInSteadyState) {
  ThreadPool::global().set_threads(2);  // loops shared with a worker, where they split
  EXPECT_EQ(allocations_in_steady_state(GetParam(), 3, 100), 0u) << GetParam();
}

TEST(ExecuteAllocations, TheCounterSeesAllocationsAnywhere) {
  g_allocations.store(0);
  g_counting.store(true);
  auto* p = new std::vector<int>(1000);  // two through operator new: the vector, its array
  void* q = nullptr;
  (void)posix_memalign(&q, 64, 4096);
  g_counting.store(false);
  delete p;
  free(q);
  EXPECT_EQ(g_allocations.load(), 3u);
}

// Portable kernels and XNNPACK, float and quantized. Not here: portable programs whose
// matrix products split across the pool (transformer_block, lstm): sgemm's packing
// buffer is per thread, made at a thread's first product, and on a busy machine a
// worker may take its first tile only after the warm-up (one allocation per thread,
// once; seen under scripts/busy); and the int4 LLM recipes (int4_gemm packs its
// activations per call).
INSTANTIATE_TEST_SUITE_P(Models, ExecuteAllocations,
                         ::testing::Values("add", "mlp", "mlp_xnnpack", "cnn", "cnn_xnnpack",
                                           "mlp_qd8_xnnpack", "cnn_qs8_xnnpack", "lstm_xnnpack",
                                           "transformer_block_xnnpack", "mobilenet_v3_xnnpack",
                                           "convnext_xnnpack", "vit_xnnpack",
                                           "mobilenet_v2_xnnpack"),
                         [](const auto& model) { return std::string(model.param); });

}  // namespace
}  // namespace et
