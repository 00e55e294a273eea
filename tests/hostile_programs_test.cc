// Hostile programs and call sequences against the service core, one per finding of
// shared/docs/security-review.md that a program can trigger (C1, C2, H2-H6, M1, M2,
// L1, L2). Each attack comes from a second session; every test then checks that
// the victim session's model still gives the result it gave before. Run under
// ASan+UBSan in CI: an overflow the checks miss is a sanitizer report there.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "runtime/testing/program_builder.h"
#include "server/core/core.h"
#include "server/transport/etproto/et_protocol.h"
#include "tools/npy.h"

namespace et::server {
namespace {

namespace pb = ::etserver::v1;
using testing::ProgramBuilder;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> floats(std::vector<float> v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

pb::Value inline_floats(std::vector<int64_t> sizes, const std::vector<float>& values) {
  pb::Value v;
  pb::Tensor& t = *v.mutable_tensor();
  t.set_dtype(pb::FLOAT32);
  for (int64_t s : sizes) t.add_sizes(s);
  t.set_inline_data(values.data(), values.size() * sizeof(float));
  return v;
}

class HostilePrograms : public ::testing::Test {
 protected:
  void SetUp() override {
    victim_ = core_.open_session("victim").value();
    attacker_ = core_.open_session("attacker").value();
    pb::LoadProgramRequest lp;
    lp.set_session(victim_->token);
    lp.set_program_bytes(read_file(std::string(ET_FIXTURES_DIR) + "/mlp.pte"));
    pb::LoadProgramResponse lp_resp;
    ASSERT_TRUE(et_.load_program(lp, lp_resp).ok());
    pb::LoadMethodRequest lm;
    lm.set_session(victim_->token);
    lm.set_program_id(lp_resp.program_id());
    pb::LoadMethodResponse lm_resp;
    ASSERT_TRUE(et_.load_method(lm, lm_resp).ok());
    victim_method_ = lm_resp.method_handle();
    auto in = tools::read_npy(std::string(ET_FIXTURES_DIR) + "/mlp/forward.in0.npy");
    ASSERT_TRUE(in.ok());
    pb::Tensor& t = *victim_input_.mutable_tensor();
    t.set_dtype(pb::FLOAT32);
    for (int64_t s : in->shape) t.add_sizes(s);
    t.set_inline_data(in->data.data(), in->data.size());
    victim_output_ = run_victim();
    ASSERT_FALSE(victim_output_.empty());
  }

  void TearDown() override {
    // The daemon still serves the other session, with the same result as before.
    EXPECT_EQ(run_victim(), victim_output_);
  }

  std::string run_victim() {
    pb::RunRequest req;
    req.set_session(victim_->token);
    req.set_method_handle(victim_method_);
    *req.add_inputs() = victim_input_;
    pb::RunResponse resp;
    Status s = et_.run(req, resp);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return s.ok() ? resp.outputs(0).tensor().inline_data() : "";
  }

  // Loads the attacker's program; the method handle, or the first error.
  Result<uint64_t> load(const ProgramBuilder& b) {
    const std::vector<uint8_t> bytes = b.finish();
    pb::LoadProgramRequest lp;
    lp.set_session(attacker_->token);
    lp.set_program_bytes(bytes.data(), bytes.size());
    pb::LoadProgramResponse lp_resp;
    ET_RETURN_IF_ERROR(et_.load_program(lp, lp_resp));
    pb::LoadMethodRequest lm;
    lm.set_session(attacker_->token);
    lm.set_program_id(lp_resp.program_id());
    pb::LoadMethodResponse lm_resp;
    ET_RETURN_IF_ERROR(et_.load_method(lm, lm_resp));
    return lm_resp.method_handle();
  }

  Status run(uint64_t method, std::vector<pb::Value> inputs, pb::RunResponse* out = nullptr) {
    pb::RunRequest req;
    req.set_session(attacker_->token);
    req.set_method_handle(method);
    for (pb::Value& v : inputs) *req.add_inputs() = std::move(v);
    pb::RunResponse resp;
    Status s = et_.run(req, resp);
    if (out) *out = resp;
    return s;
  }

  // A sealed memfd of `size` bytes registered for the attacker.
  uint64_t segment(size_t size) {
    const int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
    EXPECT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    auto id = core_.register_segment(attacker_->token, fd);
    EXPECT_TRUE(id.ok()) << id.status().to_string();
    return id.ok() ? *id : 0;
  }

  Core core_{ServiceLimits{}};
  EtProtocol et_{core_};
  std::shared_ptr<Session> victim_, attacker_;
  uint64_t victim_method_ = 0;
  pb::Value victim_input_;
  std::string victim_output_;
};

// C1: an unplanned dynamic input bound at 1 element, which clone.out grows to 1024.
ProgramBuilder grow_unplanned_input() {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {1024}, .shape_dynamism = 1});
  b.add_constant(floats(std::vector<float>(1024, 7.0f)));
  const int c = b.add_tensor({.sizes = {1024}, .data_buffer_idx = 1});
  const int none = b.add_none();
  b.kernel_call(b.add_operator("aten::clone", "out"), {c, none, x});
  b.set_inputs({x});
  b.set_outputs({x});
  return b;
}

TEST_F(HostilePrograms, C1_KernelCannotGrowAnInputPastItsBytes) {
  auto method = load(grow_unplanned_input());
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  Status s = run(*method, {inline_floats({1}, {1.0f})});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("needs 4096 bytes, but only 4 back this tensor"), std::string::npos)
      << s.to_string();
}

TEST_F(HostilePrograms, C1_KernelCannotWritePastTheEndOfASegment) {
  auto method = load(grow_unplanned_input());
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uint64_t id = segment(page);
  pb::Value v;
  pb::Tensor& t = *v.mutable_tensor();
  t.set_dtype(pb::FLOAT32);
  t.add_sizes(1);
  t.mutable_segment()->set_segment_id(id);
  t.mutable_segment()->set_offset(page - 4);  // the last float of the mapping
  t.mutable_segment()->set_length(4);
  Status s = run(*method, {v});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("back this tensor"), std::string::npos) << s.to_string();
}

// C2 A: et_view points a large dynamic tensor at a 16-byte buffer; clone.out then
// writes 4096 bytes through it.
TEST_F(HostilePrograms, C2_ViewIsHeldToItsSourcesBytes) {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {4}, .memory_id = 1});
  const int v = b.add_tensor({.sizes = {1024}, .memory_id = 2, .shape_dynamism = 1});
  b.add_constant(floats(std::vector<float>(1024, 7.0f)));
  const int c = b.add_tensor({.sizes = {1024}, .data_buffer_idx = 1});
  const int shape = b.add_int_list({b.add_int(4)});
  const int none = b.add_none();
  b.kernel_call(b.add_operator("executorch_prim::et_view", "default"), {x, shape, v});
  b.kernel_call(b.add_operator("aten::clone", "out"), {c, none, v});
  b.set_inputs({x});
  b.set_outputs({v});
  b.set_planned_buffers({16, 4096});
  auto method = load(b);
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  Status s = run(*method, {inline_floats({4}, {1, 2, 3, 4})});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("needs 4096 bytes, but only 16 back this tensor"), std::string::npos)
      << s.to_string();
}

// C2 B: a view of the caller's input survives into the next execute, whose binding
// frees that input's copy; the first instruction then writes through the stale alias
// (a use after free under ASan without the undo).
TEST_F(HostilePrograms, C2_ViewAliasDoesNotOutliveTheExecute) {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {4}});
  const int v = b.add_tensor({.sizes = {4}, .memory_id = 1});
  b.add_constant(floats({9, 9, 9, 9}));
  const int c = b.add_tensor({.sizes = {4}, .data_buffer_idx = 1});
  const int shape = b.add_int_list({b.add_int(4)});
  const int none = b.add_none();
  b.kernel_call(b.add_operator("aten::clone", "out"), {c, none, v});
  b.kernel_call(b.add_operator("executorch_prim::et_view", "default"), {x, shape, v});
  b.set_inputs({x});
  b.set_outputs({v});
  b.set_planned_buffers({16});
  auto method = load(b);
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  for (float k : {1.0f, 2.0f, 3.0f}) {
    pb::RunResponse resp;
    Status s = run(*method, {inline_floats({4}, {k, k, k, k})}, &resp);
    ASSERT_TRUE(s.ok()) << s.to_string();
    const std::vector<uint8_t> want = floats({k, k, k, k});
    EXPECT_EQ(resp.outputs(0).tensor().inline_data(), std::string(want.begin(), want.end()));
  }
}

TEST_F(HostilePrograms, C2_ViewIntoAMethodInputIsRefusedAtLoad) {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {4}, .memory_id = 1});
  const int y = b.add_tensor({.sizes = {4}, .memory_id = 1});
  const int shape = b.add_int_list({b.add_int(4)});
  b.kernel_call(b.add_operator("executorch_prim::et_view", "default"), {y, shape, x});
  b.set_inputs({x});
  b.set_outputs({y});
  b.set_planned_buffers({16});
  auto method = load(b);
  ASSERT_FALSE(method.ok());
  EXPECT_NE(method.status().message().find("et_view's output value 0 is a method input"),
            std::string::npos)
      << method.status().to_string();
}

// H2: a freed output was read by the server from NULL.
TEST_F(HostilePrograms, H2_FreeOfAnOutputIsRefusedAtLoad) {
  ProgramBuilder b;
  const int y = b.add_tensor({.sizes = {4}, .memory_id = 1});
  b.free_value(y);
  b.set_outputs({y});
  b.set_planned_buffers({16});
  auto method = load(b);
  ASSERT_FALSE(method.ok());
  EXPECT_NE(method.status().message().find("the freed value 0 is a method output"),
            std::string::npos)
      << method.status().to_string();
}

// H3: a move replaced the input's value with None; the next binding read NULL.
TEST_F(HostilePrograms, H3_MoveIntoAnInputIsRefusedAtLoad) {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {1}, .memory_id = 1});
  const int none = b.add_none();
  b.move(none, x);
  b.set_inputs({x});
  b.set_planned_buffers({16});
  auto method = load(b);
  ASSERT_FALSE(method.ok());
  EXPECT_NE(method.status().message().find("the move destination value 0 is a method input"),
            std::string::npos)
      << method.status().to_string();
}

// H3 through a kernel: sym_ite copied a whole value (an int) over the input tensor.
TEST_F(HostilePrograms, H3_ScalarOpCannotOverwriteATensor) {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {1}, .memory_id = 1});
  const int cond = b.add_bool(true);
  const int five = b.add_int(5);
  b.kernel_call(b.add_operator("executorch_prim::sym_ite", "Scalar"), {cond, five, five, x});
  b.set_inputs({x});
  b.set_outputs({x});
  b.set_planned_buffers({16});
  auto method = load(b);
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  for (int i = 0; i < 2; ++i) {
    Status s = run(*method, {inline_floats({1}, {1.0f})});
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("argument 3 is tensor where a scalar result slot is required"),
              std::string::npos)
        << s.to_string();
  }
}

// H4: index.Tensor_out read an index list item that has no memory.
TEST_F(HostilePrograms, H4_TensorListItemsNeedMemory) {
  ProgramBuilder b;
  const int self = b.add_tensor({.sizes = {8}, .memory_id = 1});
  const int index = b.add_tensor({.dtype = ScalarType::kLong, .sizes = {4}});
  const int list = b.add_tensor_list({index});
  const int out = b.add_tensor({.sizes = {4}, .memory_id = 1, .memory_offset = 32});
  b.kernel_call(b.add_operator("aten::index", "Tensor_out"), {self, list, out});
  b.set_inputs({self});
  b.set_outputs({out});
  b.set_planned_buffers({64});
  auto method = load(b);
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  Status s = run(*method, {inline_floats({8}, {0, 1, 2, 3, 4, 5, 6, 7})});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("item 0 of argument 1 is a tensor with no memory"), std::string::npos)
      << s.to_string();
}

// H5 / M2: convolution scratch sized by the program (4 TiB of im2col columns for an
// 8 MiB program state) was a std::vector: bad_alloc, on a pool thread std::terminate.
TEST_F(HostilePrograms, M2_ConvolutionScratchIsLimited) {
  for (int groups : {1, 2}) {
    ProgramBuilder b;
    const int32_t k = 1 << 10;
    const int x = b.add_tensor({.sizes = {1, groups, 1, 1}, .memory_id = 1});
    const int w = b.add_tensor({.sizes = {groups, 1, k, k}, .memory_id = 2});
    const int y = b.add_tensor({.sizes = {1, groups, k, k}, .memory_id = 3});
    const int none = b.add_none();
    const int ones = b.add_int_list({b.add_int(1), b.add_int(1)});
    const int pad = b.add_int_list({b.add_int(k - 1), b.add_int(k - 1)});
    const int zeros = b.add_int_list({b.add_int(0), b.add_int(0)});
    b.kernel_call(b.add_operator("aten::convolution", "out"),
                  {x, w, none, ones, pad, ones, b.add_bool(false), zeros, b.add_int(groups), y});
    b.set_inputs({x});
    b.set_outputs({y});
    const int64_t plane = int64_t{4} * k * k * groups;
    b.set_planned_buffers({4 * groups, plane, plane});
    auto method = load(b);
    ASSERT_TRUE(method.ok()) << method.status().to_string();
    Status s = run(*method, {inline_floats({1, groups, 1, 1}, std::vector<float>(groups, 1.0f))});
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
    EXPECT_NE(s.message().find("scratch memory"), std::string::npos) << s.to_string();
  }
}

// H6: an unplanned output of 96 GiB was zero-filled at LoadMethod.
TEST_F(HostilePrograms, H6_OutputBuffersCountAgainstTheMethodLimit) {
  ProgramBuilder b;
  const int y = b.add_tensor({.sizes = {1 << 30, 24}});
  b.set_outputs({y});
  auto method = load(b);
  ASSERT_FALSE(method.ok());
  EXPECT_EQ(method.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(method.status().message().find("--max-method-bytes"), std::string::npos)
      << method.status().to_string();
}

// M1: 4-byte input entries each became a few hundred bytes of metadata.
TEST_F(HostilePrograms, M1_InputCountIsCapped) {
  ProgramBuilder b;
  const int x = b.add_int(1);
  b.set_inputs(std::vector<int32_t>(5000, x));
  auto method = load(b);
  ASSERT_FALSE(method.ok());
  EXPECT_NE(method.status().message().find("lists 5000 inputs; at most 4096"), std::string::npos)
      << method.status().to_string();
}

// L1: a constant listed as an input was written over at SetInputs.
TEST_F(HostilePrograms, L1_ConstantCannotBeAnInput) {
  ProgramBuilder b;
  b.add_constant(floats({1, 2, 3, 4}));
  const int c = b.add_tensor({.sizes = {4}, .data_buffer_idx = 1});
  b.set_inputs({c});
  b.set_outputs({c});
  auto method = load(b);
  ASSERT_FALSE(method.ok());
  EXPECT_NE(method.status().message().find("a method input cannot be program data"),
            std::string::npos)
      << method.status().to_string();
}

// L2: strides from a client's sizes and dim order overflowed int64 (UB) before any
// size check.
TEST_F(HostilePrograms, L2_StridesFromClientSizesCannotOverflow) {
  auto method = load(grow_unplanned_input());
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  pb::Value v;
  pb::Tensor& t = *v.mutable_tensor();
  t.set_dtype(pb::FLOAT32);
  t.add_sizes(0);
  for (int d = 1; d < 16; ++d) t.add_sizes(INT32_MAX);
  for (int d = 0; d < 16; ++d) t.add_dim_order(static_cast<uint32_t>(d));
  Status s = run(*method, {v});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find("overflow a 64-bit stride"), std::string::npos) << s.to_string();
}

// H5: an exception under a kernel (here a test kernel that throws what a library would
// for a size a program chose) leaked the busy slot and a worker per call, until every
// call of every session timed out. Many more calls than workers, then the victim runs.
Status throws_bad_alloc(KernelContext&) { throw std::bad_alloc(); }

TEST_F(HostilePrograms, H5_AnExceptionLeaksNoWorkerOrSlot) {
  static const bool registered =
      KernelRegistry::global().add("test::throws_bad_alloc", throws_bad_alloc).ok();
  ASSERT_TRUE(registered);
  ProgramBuilder b;
  b.kernel_call(b.add_operator("test::throws_bad_alloc"), {});
  auto method = load(b);
  ASSERT_TRUE(method.ok()) << method.status().to_string();
  for (int i = 0; i < 64; ++i) {
    Status s = run(*method, {});
    ASSERT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
  }
}

}  // namespace
}  // namespace et::server
