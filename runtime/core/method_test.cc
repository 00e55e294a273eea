// Method behaviour on real exported programs, with kernels defined here so the
// runtime is tested on its own: loading, input binding, the ready/refuse rules,
// ownership of inputs and outputs, and kernel error reporting.
#include "runtime/core/method.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime/core/sanitizers.h"
#include "runtime/testing/fixtures.h"
#include "runtime/testing/program_builder.h"

namespace et {
namespace {

using testing::fixture;

// out = self + other for same-shape contiguous float32 tensors.
Status test_add(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* a, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* b, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  for (int64_t i = 0; i < out->numel(); ++i) {
    out->data_as<float>()[i] = a->data_as<const float>()[i] + b->data_as<const float>()[i];
  }
  return Status();
}

Status test_fail(KernelContext& ctx) { return ctx.fail("boom"); }
Status test_noop(KernelContext&) { return Status(); }
Status test_write_first_arg(KernelContext& ctx) { return ctx.output(0).status(); }

std::unique_ptr<KernelRegistry> registry_with(
    std::initializer_list<std::pair<const char*, KernelFn>> kernels) {
  auto r = std::make_unique<KernelRegistry>();
  for (const auto& [name, fn] : kernels) EXPECT_TRUE(r->add(name, fn).ok());
  return r;
}

struct Floats {
  std::vector<float> data;
  std::vector<int64_t> sizes;
  TensorView view(bool writable = true) {
    TensorView v;
    v.data = data.data();
    v.nbytes = data.size() * sizeof(float);
    v.dtype = ScalarType::kFloat;
    v.sizes = sizes;
    v.writable = writable;
    return v;
  }
};

Floats floats(std::vector<int64_t> sizes, float start) {
  Floats f{{}, std::move(sizes)};
  int64_t n = 1;
  for (int64_t s : f.sizes) n *= s;
  for (int64_t i = 0; i < n; ++i) f.data.push_back(start + static_cast<float>(i));
  return f;
}

const float* output_floats(const Method& m, size_t i) {
  auto v = m.output(i);
  EXPECT_TRUE(v.ok()) << v.status().to_string();
  return v.ok() ? (*v)->to_tensor().data_as<const float>() : nullptr;
}

bool mentions(const Status& s, const std::string& part) {
  return s.message().find(part) != std::string::npos;
}

TEST(MethodLoad, ListsEveryMissingOperator) {
  KernelRegistry empty;
  auto m = Method::load(fixture("mlp.pte"), "forward", {.kernels = &empty});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  for (const char* op : {"aten::addmm.out", "aten::permute_copy.out", "aten::relu.out"}) {
    EXPECT_TRUE(mentions(m.status(), op)) << m.status().message();
  }
  EXPECT_TRUE(mentions(m.status(), "3 operator(s)")) << m.status().message();
}

TEST(MethodLoad, NamesMissingBackend) {
  KernelRegistry empty;
  BackendRegistry no_backends;
  auto m = Method::load(fixture("mlp_xnnpack.pte"), "forward",
                        {.kernels = &empty, .backends = &no_backends});
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(mentions(m.status(), "XnnpackBackend")) << m.status().message();
}

TEST(MethodLoad, UnknownMethodListsTheOnesThatExist) {
  auto m = Method::load(fixture("two_methods.pte"), "backward");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(mentions(m.status(), "forward")) << m.status().message();
  EXPECT_TRUE(mentions(m.status(), "encode")) << m.status().message();
}

class AddMethod : public ::testing::Test {
 protected:
  void SetUp() override { load("add.pte"); }
  void load(const std::string& file) {
    auto m = Method::load(fixture(file), "forward", {.kernels = registry_.get()});
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    method_ = std::move(*m);
  }
  std::unique_ptr<KernelRegistry> registry_ = registry_with({{"aten::add.out", test_add}});
  std::unique_ptr<Method> method_;
  Floats a_ = floats({2, 3}, 1), b_ = floats({2, 3}, 10);
};

TEST_F(AddMethod, ComputesAndHandsOutOutputs) {
  ASSERT_TRUE(
      method_->set_inputs({{InputValue::of_tensor(a_.view()), InputValue::of_tensor(b_.view())}})
          .ok());
  ASSERT_TRUE(method_->execute().ok());
  const float* out = output_floats(*method_, 0);
  ASSERT_NE(out, nullptr);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], a_.data[i] + b_.data[i]);
}

TEST_F(AddMethod, RefusesToExecuteUntilEveryInputIsSet) {
  ASSERT_TRUE(method_->set_input(0, InputValue::of_tensor(a_.view())).ok());
  Status s = method_->execute();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(mentions(s, "input(s) 1 not set")) << s.message();
  EXPECT_EQ(method_->output(0).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(AddMethod, FailedSetInputsLeavesNoInputSet) {
  Floats wrong = floats({3, 2}, 0);
  Status s = method_->set_inputs(
      {{InputValue::of_tensor(a_.view()), InputValue::of_tensor(wrong.view())}});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(mentions(s, "input 1")) << s.message();
  Status run = method_->execute();
  EXPECT_TRUE(mentions(run, "input(s) 0, 1 not set")) << run.message();
}

TEST_F(AddMethod, OutputsAreRefusedAfterAFailedSetInput) {
  ASSERT_TRUE(
      method_->set_inputs({{InputValue::of_tensor(a_.view()), InputValue::of_tensor(b_.view())}})
          .ok());
  ASSERT_TRUE(method_->execute().ok());
  Floats wrong = floats({2, 4}, 0);
  EXPECT_FALSE(method_->set_input(1, InputValue::of_tensor(wrong.view())).ok());
  EXPECT_EQ(method_->output(0).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(method_->execute().ok());
}

TEST_F(AddMethod, PlannedInputIsCopiedAtSetInput) {
  ASSERT_TRUE(
      method_->set_inputs({{InputValue::of_tensor(a_.view()), InputValue::of_tensor(b_.view())}})
          .ok());
  a_.data[0] = 1000;  // after set_input: must not be seen
  ASSERT_TRUE(method_->execute().ok());
  EXPECT_EQ(output_floats(*method_, 0)[0], 1 + 10);
}

TEST_F(AddMethod, UnplannedInputIsReadInPlace) {
  load("add_unplanned_io.pte");
  std::vector<float> out(6);
  ASSERT_TRUE(
      method_->set_inputs({{InputValue::of_tensor(a_.view()), InputValue::of_tensor(b_.view())}})
          .ok());
  ASSERT_TRUE(method_->set_output_buffer(0, out.data(), out.size() * sizeof(float)).ok());
  a_.data[0] = 1000;  // the method points at this memory: the change is seen
  ASSERT_TRUE(method_->execute().ok());
  EXPECT_EQ(output_floats(*method_, 0), out.data());
  EXPECT_EQ(out[0], 1000 + 10);
}

TEST_F(AddMethod, ReadOnlyUnplannedInputIsCopied) {
  load("add_unplanned_io.pte");
  std::vector<float> out(6);
  ASSERT_TRUE(method_
                  ->set_inputs({{InputValue::of_tensor(a_.view(/*writable=*/false)),
                                 InputValue::of_tensor(b_.view())}})
                  .ok());
  ASSERT_TRUE(method_->set_output_buffer(0, out.data(), out.size() * sizeof(float)).ok());
  a_.data[0] = 1000;
  ASSERT_TRUE(method_->execute().ok());
  EXPECT_EQ(out[0], 1 + 10);
}

TEST_F(AddMethod, UnplannedOutputNeedsABuffer) {
  load("add_unplanned_io.pte");
  ASSERT_TRUE(
      method_->set_inputs({{InputValue::of_tensor(a_.view()), InputValue::of_tensor(b_.view())}})
          .ok());
  Status s = method_->execute();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(mentions(s, "set_output_buffer")) << s.message();
  std::vector<float> small(2);
  EXPECT_FALSE(method_->set_output_buffer(0, small.data(), small.size() * sizeof(float)).ok());
}

TEST_F(AddMethod, PlannedOutputTakesNoBuffer) {
  std::vector<float> out(6);
  EXPECT_FALSE(method_->set_output_buffer(0, out.data(), out.size() * sizeof(float)).ok());
}

TEST_F(AddMethod, KindMismatchIsRefused) {
  Status s = method_->set_input(0, InputValue::of_int(3));
  EXPECT_TRUE(mentions(s, "input 0 is int but method 'forward' expects tensor")) << s.message();
}

TEST_F(AddMethod, WrongInputCountIsRefused) {
  EXPECT_TRUE(mentions(method_->set_inputs({{InputValue::of_tensor(a_.view())}}),
                       "takes 2 input(s), got 1"));
  EXPECT_FALSE(method_->set_input(2, InputValue::of_tensor(a_.view())).ok());
}

TEST(MethodExecute, OutputThatIsAnInputReturnsTheInput) {
  auto r = registry_with({{"aten::add.out", test_add}});
  auto m = Method::load(fixture("identity_output.pte"), "forward", {.kernels = r.get()});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_TRUE((*m)->output_is_input(0));
  EXPECT_FALSE((*m)->output_is_input(1));
  Floats a = floats({2, 3}, 5), b = floats({2, 3}, 7);
  ASSERT_TRUE(
      (*m)->set_inputs({{InputValue::of_tensor(a.view()), InputValue::of_tensor(b.view())}}).ok());
  ASSERT_TRUE((*m)->execute().ok());
  const float* out = output_floats(**m, 0);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], a.data[i]);
}

TEST(MethodExecute, KernelErrorNamesInstructionAndOperator) {
  auto r = registry_with({{"aten::add.out", test_fail}});
  auto m = Method::load(fixture("add.pte"), "forward", {.kernels = r.get()});
  ASSERT_TRUE(m.ok());
  Floats a = floats({2, 3}, 0), b = floats({2, 3}, 0);
  ASSERT_TRUE(
      (*m)->set_inputs({{InputValue::of_tensor(a.view()), InputValue::of_tensor(b.view())}}).ok());
  Status s = (*m)->execute();
  EXPECT_EQ(s.message(), "method 'forward', instruction 0:0: aten::add.out: boom");
  EXPECT_EQ((*m)->output(0).status().code(), StatusCode::kFailedPrecondition);
}

TEST(MethodExecute, NoKernelMayWriteAProgramConstant) {
  // mlp: addmm's first argument is the bias, a constant of the program.
  auto r = registry_with({{"aten::permute_copy.out", test_noop},
                          {"aten::addmm.out", test_write_first_arg},
                          {"aten::relu.out", test_noop}});
  auto m = Method::load(fixture("mlp.pte"), "forward", {.kernels = r.get()});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  Floats x = floats({4, 16}, 0);
  ASSERT_TRUE((*m)->set_inputs({{InputValue::of_tensor(x.view())}}).ok());
  Status s = (*m)->execute();
  EXPECT_TRUE(mentions(s, "program constant")) << s.message();
}

TEST(MethodInputs, ScalarInputMustEqualTheTracedValue) {
  auto r = registry_with({{"aten::add.out", test_noop},
                          {"aten::mul.out", test_noop},
                          {"dim_order_ops::_to_dim_order_copy.out", test_noop}});
  auto m = Method::load(fixture("scalars.pte"), "forward", {.kernels = r.get()});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->meta().inputs[1].kind, ValueKind::kInt);
  EXPECT_EQ((*m)->meta().inputs[1].traced.to_int(), 3);
  Status s = (*m)->set_input(1, InputValue::of_int(4));
  EXPECT_TRUE(mentions(s, "exported with the value 3")) << s.message();
  EXPECT_TRUE((*m)->set_input(1, InputValue::of_int(3)).ok());
  EXPECT_TRUE((*m)->set_input(2, InputValue::of_double(1.5)).ok());
  EXPECT_FALSE((*m)->set_input(2, InputValue::of_double(2.5)).ok());
  EXPECT_FALSE((*m)->set_input(2, InputValue::of_int(1)).ok());
}

TEST(MethodInputs, DynamicInputResizesWithinBounds) {
  auto r = registry_with({{"aten::permute_copy.out", test_noop},
                          {"aten::addmm.out", test_noop},
                          {"aten::relu.out", test_noop}});
  auto m = Method::load(fixture("dynamic_batch.pte"), "forward", {.kernels = r.get()});
  ASSERT_TRUE(m.ok());
  Floats x3 = floats({3, 16}, 0), x9 = floats({9, 16}, 0);
  EXPECT_TRUE((*m)->set_input(0, InputValue::of_tensor(x3.view())).ok());
  Status s = (*m)->set_input(0, InputValue::of_tensor(x9.view()));
  EXPECT_TRUE(mentions(s, "at most [8, 16]")) << s.message();
}

}  // namespace
}  // namespace et

namespace et {
namespace {

// Pages of [data, data + nbytes) that are in memory now.
size_t resident_pages(const void* data, size_t nbytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data) + nbytes;
  std::vector<unsigned char> in((end - first + page - 1) / page);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(first), end - first, in.data()), 0);
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

// A method whose one output is a 4 MiB planned tensor that nothing writes.
std::shared_ptr<const Program> big_planned_output() {
  testing::ProgramBuilder b;
  const int out = b.add_tensor({.sizes = {1 << 20}, .memory_id = 1});
  b.set_outputs({out});
  b.set_planned_buffers({int64_t{4} << 20});
  auto program = Program::load(ProgramBytes::adopt(b.finish()));
  EXPECT_TRUE(program.ok()) << program.status().to_string();
  return program.ok() ? *program : nullptr;
}

TEST(MethodLoad, PrefaultWritesEveryPageOfThePlannedMemory) {
  const size_t nbytes = size_t{4} << 20;
  const size_t pages = nbytes / static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto lazy = Method::load(big_planned_output(), "forward");
  ASSERT_TRUE(lazy.ok()) << lazy.status().to_string();
  ASSERT_TRUE((*lazy)->execute().ok());  // no instructions: nothing is written
  const void* lazy_data = (*(*lazy)->output(0))->to_tensor().data();
  // calloc gives a block this large fresh zero pages: none in memory until used (a
  // sanitizer's allocator may clear it, and so touch it, itself).
  if (!kSanitized) {
    EXPECT_LT(resident_pages(lazy_data, nbytes), pages / 2);
  }

  auto touched = Method::load(big_planned_output(), "forward", {.prefault = true});
  ASSERT_TRUE(touched.ok()) << touched.status().to_string();
  ASSERT_TRUE((*touched)->execute().ok());
  EXPECT_EQ(resident_pages((*(*touched)->output(0))->to_tensor().data(), nbytes), pages);
}

TEST(MethodLoad, PlannedMemoryAboveTheLimitIsRefused) {
  auto m = Method::load(fixture("mlp.pte"), "forward", {.max_planned_bytes = 1000});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(mentions(m.status(), "limit of 1000 bytes")) << m.status().message();
}

}  // namespace
}  // namespace et

namespace et {
namespace {

// A backend that counts its once-per-program and per-instance work.
class CountingBackend : public Backend {
 public:
  Result<std::unique_ptr<DelegateInstance>> init(const DelegateSpec& spec) const override {
    ++instances;
    auto shared = spec.program->backend_cache().get_or_create(
        "counting:" + std::to_string(spec.delegate_index),
        [&]() -> Result<std::shared_ptr<const void>> {
          ++prepared;
          return std::shared_ptr<const void>(std::make_shared<size_t>(spec.payload.size()));
        });
    if (!shared.ok()) return shared.status();
    class Instance : public DelegateInstance {
      Status execute(KernelContext&) override { return Status(); }
    };
    return std::unique_ptr<DelegateInstance>(std::make_unique<Instance>());
  }
  mutable int instances = 0;
  mutable int prepared = 0;
};

TEST(MethodLoad, BackendWorkIsSharedAcrossInstancesOfAProgram) {
  auto program = fixture("mlp_xnnpack.pte");
  ASSERT_NE(program, nullptr);
  auto backend = std::make_shared<CountingBackend>();
  BackendRegistry backends;
  ASSERT_TRUE(backends.add("XnnpackBackend", backend).ok());
  KernelRegistry kernels;
  for (const std::string& op : (*program->method_meta("forward"))->operators) {
    ASSERT_TRUE(kernels.add(op, test_noop).ok());
  }
  std::vector<std::unique_ptr<Method>> methods;
  for (int i = 0; i < 5; ++i) {
    auto m = Method::load(program, "forward", {.kernels = &kernels, .backends = &backends});
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    methods.push_back(std::move(*m));
  }
  const int delegates = static_cast<int>(program->backend_cache().size());
  EXPECT_GE(delegates, 1);
  EXPECT_EQ(backend->instances, 5 * delegates);
  EXPECT_EQ(backend->prepared, delegates);  // once per program, not per instance
}

}  // namespace
}  // namespace et
